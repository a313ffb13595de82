# Evaluate the NixOS and home-manager modules with nixpkgs' `lib` alone: stub options stand in
# for what NixOS / home-manager declare (users, systemd, activation, home.*), and a stub `pkgs`
# makes real (unbuilt) derivations so store paths look as they will. No nixpkgs, no network.
#
#   nix-instantiate --eval --strict --json --read-write-mode nix/tests/eval-modules.nix \
#     --arg lib 'import /path/to/nixpkgs/lib' [--arg duplicate true]
#
# Prints the rendered specs, the activation script(s) and the service units (see nix/README.md).
# The flake's `checks.<system>.module-eval` does the same against the real NixOS module system.
{ lib
, duplicate ? false # declare two plugins with one key: the assertion must name them
, service ? true
}:
let
  system = "x86_64-linux";
  hermesLib = import ../lib.nix;

  # --- stub pkgs: real derivations (instantiated, never built) -------------------------------
  drv = name: derivation { inherit name system; builder = "/bin/sh"; args = [ "-c" "echo stub > $out" ]; };
  writeTextFile = { name, text, checkPhase ? "", executable ? false, destination ? "" }:
    derivation { inherit name system text checkPhase; builder = "/bin/sh"; args = [ "-c" "echo \"$text\" > $out" ]; }
    // { inherit text checkPhase; };
  pkgs = {
    inherit system writeTextFile;
    writeText = name: text: writeTextFile { inherit name text; };
    writeShellScript = name: text: writeTextFile { inherit name; text = "#!/bin/sh\n${text}"; executable = true; };
    hermes-kit = drv "hermes-kit-0.1.0";
    bash = drv "bash-5.2";
    coreutils = drv "coreutils-9.5";
    util-linux = drv "util-linux-2.40";
    ripgrep = drv "ripgrep-14.1";
    stdenv.hostPlatform = { isDarwin = false; isLinux = true; };
  };

  # A plugin folder as a path and one as a derivation (as fetchFromGitHub would give).
  weather = drv "source";
  plugins = [
    ../../plugins/hello-world
    { package = weather; key = "weather"; grants = [ "tools.override" ]; settings.units = "metric"; required = true; }
    { package = drv "hermes-lcm-1.2.0"; key = "hermes-lcm"; enable = false; }
  ] ++ lib.optional duplicate { package = drv "source"; key = "weather"; };

  common = {
    enable = true;
    extraPlugins = plugins;
    extraNodePackages = [ "${drv "hermes-plugin-search-0.3.0"}/lib/node_modules/hermes-plugin-search" ];
    settings = { model.default = "anthropic/claude-sonnet-4"; plugins.disabled = [ "legacy" ]; };
    profiles.work = {
      extraPlugins = [ ../../plugins/hello-world ];
      settings.model.default = "openai/gpt-5";
      listPolicy = "replace";
    };
    environmentFile = "/run/secrets/hermes-agent.env";
    extraPackages = [ pkgs.ripgrep ];
    service.enable = service;
  };

  # --- stub option declarations --------------------------------------------------------------
  anything = lib.mkOption { type = lib.types.anything; default = { }; };
  listOfAnything = lib.mkOption { type = lib.types.listOf lib.types.anything; default = [ ]; };
  assertionsModule = {
    options.assertions = listOfAnything;
    options.warnings = lib.mkOption { type = lib.types.listOf lib.types.str; default = [ ]; };
  };
  nixosStubs = {
    imports = [ assertionsModule ];
    options = {
      users.users = lib.mkOption { type = lib.types.attrsOf lib.types.anything; default = { }; };
      users.groups = lib.mkOption { type = lib.types.attrsOf lib.types.anything; default = { }; };
      systemd.tmpfiles.rules = listOfAnything;
      systemd.services = lib.mkOption { type = lib.types.attrsOf (lib.types.submodule {
        freeformType = lib.types.attrsOf lib.types.anything;
        options.serviceConfig = lib.mkOption { type = lib.types.attrsOf lib.types.anything; default = { }; };
      }); default = { }; };
      environment.systemPackages = listOfAnything;
      system.activationScripts = lib.mkOption { type = lib.types.attrsOf lib.types.anything; default = { }; };
      nix.package = lib.mkOption { type = lib.types.package; default = drv "nix-2.24"; };
    };
  };
  hmStubs = {
    imports = [ assertionsModule ];
    options = {
      home.homeDirectory = lib.mkOption { type = lib.types.str; default = "/home/alice"; };
      home.profileDirectory = lib.mkOption { type = lib.types.str; default = "/home/alice/.nix-profile"; };
      home.packages = listOfAnything;
      home.sessionVariables = anything;
      home.activation = lib.mkOption { type = lib.types.attrsOf lib.types.anything; default = { }; };
      xdg.stateHome = lib.mkOption { type = lib.types.str; default = "/home/alice/.local/state"; };
      nix.package = lib.mkOption { type = lib.types.nullOr lib.types.package; default = null; };
      systemd.user.services = anything;
      launchd.agents = anything;
    };
  };
  # home-manager extends lib with lib.hm (its DAG helpers).
  hmLib = lib.extend (_: _: { hm.dag.entryAfter = after: data: { inherit after data; before = [ ]; }; });

  eval = { modules, specialLib ? lib }: specialLib.evalModules {
    modules = modules ++ [ { _module.args = { inherit pkgs; }; } ];
  };

  nixos = eval { modules = [ nixosStubs ../nixos.nix { services.hermes-agent = common; } ]; };
  hm = eval { specialLib = hmLib; modules = [ hmStubs ../home-manager.nix { services.hermes-agent = common; } ]; };

  # services.hermes-agent.* as documentation rows (what nix/README.md's option table shows).
  optionsDoc = opts: map (o: {
    inherit (o) name type description;
    default = o.default.text or null;
    example = o.example.text or null;
    declaredIn = map (d: baseNameOf (toString d)) o.declarations;
  }) (lib.filter (o: lib.hasPrefix "services.hermes-agent." o.name && o.visible && !o.internal)
        (lib.optionAttrSetToDocList opts.services.hermes-agent));

  failed = cfg: map (a: a.message) (lib.filter (a: !a.assertion) cfg.assertions);

  report = cfg: extra: {
    failedAssertions = failed cfg;
  } // lib.optionalAttrs (failed cfg == [ ]) ({
    specs = map (s: { inherit (s) name home; spec = builtins.fromJSON (builtins.unsafeDiscardStringContext s.spec.text); specPath = "${s.spec}"; checkPhase = s.spec.checkPhase; }) cfg.services.hermes-agent.build.specs;
    keys = map (a: hermesLib.pluginKeys a.plugins) cfg.services.hermes-agent.build.specArgs;
  } // extra cfg);
in
{
  options = { nixos = optionsDoc nixos.options; home-manager = optionsDoc hm.options; };
  nixos = report nixos.config (cfg: {
    activationSnippet = cfg.system.activationScripts.hermes-agent;
    activationScript = (cfg.services.hermes-agent.build.mkActivationScript {
      extraArgs = [ "--run-as" "hermes:hermes" "--state" "/var/lib/nixos/hermes-agent-homes" ];
      path = [ pkgs.coreutils pkgs.util-linux cfg.nix.package ];
    }).text;
    users = { inherit (cfg.users) users groups; };
    tmpfiles = cfg.systemd.tmpfiles.rules;
    service = cfg.systemd.services.hermes-agent or null;
  });
  home-manager = report hm.config (cfg: {
    activation = cfg.home.activation.hermesAgent;
    packages = map (p: p.name) cfg.home.packages;
    service = cfg.systemd.user.services.hermes-agent or null;
  });
}
