{
  description = "hermes-kit: declarative deployment toolkit and runtime for Hermes agent plugins";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [ "x86_64-linux" "aarch64-linux" "aarch64-darwin" ];
      forAllSystems = f: lib.genAttrs systems (system: f (import nixpkgs { inherit system; overlays = [ self.overlays.default ]; }));
      # The flake's modules default `package` to the flake's own build.
      withPackage = module: { pkgs, lib, ... }: {
        imports = [ module ];
        services.hermes-agent.package = lib.mkDefault self.packages.${pkgs.stdenv.hostPlatform.system}.default;
      };
    in
    {
      # Pure (builtins only): mkDeploySpec, pluginKey(s), duplicateKeys, capabilities, ...
      lib = import ./nix/lib.nix;

      overlays.default = final: _prev: { hermes-kit = final.callPackage ./nix/package.nix { }; };

      packages = forAllSystems (pkgs: {
        default = pkgs.hermes-kit;
        hermes-kit = pkgs.hermes-kit;
      });

      nixosModules.default = withPackage ./nix/nixos.nix;
      nixosModules.hermes-agent = self.nixosModules.default;
      homeManagerModules.default = withPackage ./nix/home-manager.nix;
      homeManagerModules.hermes-agent = self.homeManagerModules.default;
      # The name home-manager's flake-parts module reads.
      homeModules = self.homeManagerModules;

      checks = forAllSystems (pkgs:
        let
          hermes = pkgs.hermes-kit;
          hello = "${hermes}/lib/node_modules/hermes-kit/plugins/hello-world";
          # A spec rendered by lib.nix, compiled (dry run) by the package: the two halves agree.
          specFile = pkgs.writeText "hermes-check-spec.json" (self.lib.toDeploySpecJSON {
            plugins = [ { package = hello; settings.greeting = "hi"; } ];
            settings.model.default = "test/model";
          });
          # The NixOS module, evaluated by the real module system (no VM): the activation snippet and
          # the unit it renders, checked for what they must contain.
          nixos = lib.nixosSystem {
            inherit (pkgs.stdenv.hostPlatform) system;
            modules = [
              self.nixosModules.default
              {
                boot.loader.grub.enable = false;
                fileSystems."/" = { device = "/dev/vda"; fsType = "ext4"; };
                system.stateVersion = "25.05";
                services.hermes-agent = {
                  enable = true;
                  extraPlugins = [ { package = hello; key = "hello-world"; } ];
                  profiles.work.extraPlugins = [ hello ];
                  settings.model.default = "test/model";
                  service.enable = true;
                };
              }
            ];
          };
          cfg = nixos.config;
        in
        {
          package = hermes;

          lib-spec = pkgs.runCommand "hermes-check-lib-spec" { } ''
            HOME=$TMPDIR ${hermes}/bin/hermes --home "$TMPDIR/home" compile --spec ${specFile} --dry-run | tee $out
            grep -q 'nix-managed-hello-world' $out
          '';
        }
        // lib.optionalAttrs pkgs.stdenv.hostPlatform.isLinux {
          module-eval = pkgs.runCommand "hermes-check-module-eval"
            {
              snippet = cfg.system.activationScripts.hermes-agent.text;
              unit = builtins.toJSON cfg.systemd.services.hermes-agent.serviceConfig;
              passAsFile = [ "snippet" "unit" ];
            } ''
            script=$(grep -o '/nix/store/[^ ]*-hermes-agent-activate' "$snippetPath" | head -n 1)
            grep -q -- '--kind nixos' "$script"
            grep -q -- '--run-as hermes:hermes' "$script"
            grep -q -- '--home profile-work /var/lib/hermes/.hermes/profiles/work' "$script"
            grep -q '"User":"hermes"' "$unitPath"
            grep -q '"ProtectSystem":"strict"' "$unitPath"
            cat "$script" "$unitPath" > $out
          '';

          vm = import ./nix/tests/vm.nix { inherit pkgs self; };
        });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [ (pkgs.nodejs_20 or pkgs.nodejs) pkgs.nix pkgs.git ];
          shellHook = ''
            echo "hermes-kit: npm ci && npx vitest run (test/nix needs a writable single-user /nix/store)"
          '';
        };
      });

      formatter = forAllSystems (pkgs: pkgs.nixpkgs-fmt);
    };
}
