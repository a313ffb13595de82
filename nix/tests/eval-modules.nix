# Evaluate nix/nixos.nix and nix/home-manager.nix with nixpkgs' `lib` alone: typed stub options
# (nix/tests/stubs/) stand in for NixOS and home-manager, and a stub `pkgs` makes real, unbuilt
# derivations. test/nix/modules.test.ts runs it (with the vendored lib) for many configurations.
#
#   nix-instantiate --eval --strict --json --read-write-mode nix/tests/eval-modules.nix \
#     --arg lib 'import /path/to/nixpkgs/lib'
#
# Without `configurations` it prints a sample of each kind and the option rows nix/README.md's table
# is generated from (nix/tests/options-table.mjs). With `configurations = { pkgs }: { <name> = { kind
# = "nixos" | "home-manager"; config = <module>; darwin ? false; }; }` it prints one report per name.
{ lib
, configurations ? null
  # The interpreter the stub Python environments run (they build with sandbox = false).
, hostPython ? "/usr/bin/python3"
}:
let
  system = "x86_64-linux";
  hermesLib = import ../lib.nix;
  hmLib = import ./stubs/hm-lib.nix lib;

  # --- stub pkgs: real derivations (instantiated; only the Python ones are built) ----------------
  drv = name: derivation { inherit name system; builder = "/bin/sh"; args = [ "-c" "echo stub > $out" ]; };
  # Text that refers only to sources (paths) becomes a real store file, so a test can compile the
  # rendered specs; text naming derivation outputs stays an unbuilt derivation.
  sourcesOnly = text: builtins.all (c: c == { path = true; }) (builtins.attrValues (builtins.getContext text));
  writeTextFile = { name, text, checkPhase ? "", executable ? false, destination ? "" }:
    (if sourcesOnly text then { outPath = builtins.toFile name text; type = "derivation"; inherit name; }
     else derivation { inherit name system text checkPhase; builder = "/bin/sh"; args = [ "-c" "echo \"$text\" > $out" ]; })
    // { inherit text checkPhase; };
  # A Python like nixpkgs': `pythonVersion`, `pkgs` whose packages name their interpreter in
  # `pythonModule` (as buildPythonPackage does), and `withPackages f` an environment derivation
  # that records the packages `f` chose (`extraLibs`). Both build (host tools, no sandbox): a package
  # is a module `<pname with _>` holding NAME, the environment's bin/python3 runs `hostPython` with
  # the packages' site-packages after whatever PYTHONPATH it is given.
  mkPython = version: full:
    let
      self = drv "python3-${full}" // {
        pythonVersion = version;
        pkgs = {
          requests = pyPkg "requests" "2.32.3";
          pyyaml = pyPkg "pyyaml" "6.0.2";
          hermes-nix-probe = pyPkg "hermes-nix-probe" "1.0";
        };
        withPackages = f:
          let libs = f self.pkgs;
          in derivation {
            name = "python3-${full}-env";
            inherit system hostPython;
            extraLibs = libs;
            builder = "/bin/sh";
            args = [ "-c" ''
              sp=""; for l in $extraLibs; do sp="''${sp:+$sp:}$l/site-packages"; done
              /bin/mkdir -p $out/bin
              printf '#!/bin/sh\nPYTHONPATH="''${PYTHONPATH:+$PYTHONPATH:}%s" exec %s "$@"\n' "$sp" "$hostPython" > $out/bin/python3
              /bin/chmod +x $out/bin/python3
            '' ];
          } // { extraLibs = libs; };
      };
      pyPkg = pname: version': derivation {
        name = "python${version}-${pname}-${version'}";
        inherit system;
        module = lib.replaceStrings [ "-" ] [ "_" ] pname;
        builder = "/bin/sh";
        args = [ "-c" "/bin/mkdir -p $out/site-packages/$module && echo \"NAME = '$name'\" > $out/site-packages/$module/__init__.py" ];
      } // { pythonModule = self; };
    in self;
  # The kit's Python (the package's `python` passthru) is not nixpkgs' default python3 here, so a
  # test can tell which one the module used, and a package taken from the wrong one.
  kitPython = mkPython "3.12" "3.12.9";
  symlinkJoin = { name, paths, postBuild ? "", nativeBuildInputs ? [ ], meta ? { } }:
    derivation { inherit name system paths postBuild; builder = "/bin/sh"; args = [ "-c" "echo stub > $out" ]; }
    // { inherit postBuild meta; };

  mkPkgs = darwin: {
    inherit system writeTextFile symlinkJoin;
    makeWrapper = drv "make-shell-wrapper-hook";
    python3 = mkPython "3.13" "3.13.2";
    writeText = name: text: writeTextFile { inherit name text; };
    writeShellScript = name: text: writeTextFile { inherit name; text = "#!/bin/sh\n${text}"; executable = true; };
    hermes-kit = drv "hermes-kit-0.1.0" // { python = kitPython; };
    bash = drv "bash-5.2";
    coreutils = drv "coreutils-9.5";
    util-linux = drv "util-linux-2.40";
    nix = drv "nix-2.24";
    ripgrep = drv "ripgrep-14.1";
    stdenv.hostPlatform = { isDarwin = darwin; isLinux = !darwin; };
  };

  evalKind = { kind, config, darwin ? false, ... }:
    let
      pkgs = mkPkgs darwin;
      useLib = if kind == "nixos" then lib else hmLib;
      stubs = if kind == "nixos" then ./stubs/nixos.nix else ./stubs/home-manager.nix;
      module = if kind == "nixos" then ../nixos.nix else ../home-manager.nix;
    in useLib.evalModules { modules = [ stubs module config { _module.args = { inherit pkgs; }; } ]; };

  failedAssertions = cfg: map (a: a.message) (lib.filter (a: !a.assertion) cfg.assertions);

  # What `system.build.toplevel` / home-manager's activation package do first: refuse the whole
  # configuration with the failed assertions' messages.
  checked = cfg:
    let failed = failedAssertions cfg;
    in if failed == [ ] then cfg
    else throw "\nFailed assertions:\n${lib.concatMapStringsSep "\n" (m: "- ${m}") failed}";

  # home.activation in the order home-manager runs it (a topological sort of the DAG).
  dagOrder = dag:
    let
      entries = lib.mapAttrsToList (name: e: e // { inherit name; }) dag;
      sorted = lib.toposort (a: b: lib.elem a.name b.after || lib.elem b.name a.before) entries;
    in if sorted ? result then map (e: e.name) sorted.result else throw "home.activation has a cycle: ${builtins.toJSON sorted}";

  scriptReport = s: if s == null then null else { text = s.text; activateArgs = s.activateArgs or null; };

  report = { kind, ... }@c:
    let
      ev = evalKind c;
      cfg = ev.config;
      h = cfg.services.hermes-agent;
      failed = failedAssertions cfg;
    in
    { failedAssertions = failed; inherit (cfg) warnings; }
    // lib.optionalAttrs (failed == [ ]) ({
      specs = lib.optionals h.enable (map (s: {
        inherit (s) name home;
        spec = builtins.fromJSON (builtins.unsafeDiscardStringContext s.spec.text);
        specPath = "${s.spec}";
        checkPhase = s.spec.checkPhase;
      }) h.build.specs);
      keys = lib.optionals h.enable (map (a: hermesLib.pluginKeys (a.plugins ++ a.npmPackages)) h.build.specArgs);
      activation = scriptReport (h.build.activation or null);
      python = lib.optionalAttrs h.enable {
        env = if h.build.pythonEnv == null then null else {
          path = "${h.build.pythonEnv}";
          inherit (h.build.pythonEnv) name drvPath;
          packages = map (p: p.name) h.build.pythonEnv.extraLibs;
        };
        inherit (h.build) pythonEnvironment;
        cli = { inherit (h.build.cli) name; path = "${h.build.cli}"; postBuild = h.build.cli.postBuild or null; };
      };
    } // (if kind == "nixos" then {
      activationSnippet = cfg.system.activationScripts.hermes-agent or null;
      users = lib.mapAttrs (_: u: { inherit (u) isSystemUser group home createHome homeMode; packages = map (p: p.name) u.packages; }) cfg.users.users;
      groups = lib.attrNames cfg.users.groups;
      tmpfiles = cfg.systemd.tmpfiles.rules;
      systemPackages = map (p: p.name) cfg.environment.systemPackages;
      service = cfg.systemd.services.hermes-agent or null;
      firewallPorts = cfg.networking.firewall.allowedTCPPorts;
    } else {
      activationEntry = cfg.home.activation.hermesAgent or null;
      activationOrder = dagOrder cfg.home.activation;
      packages = map (p: p.name) cfg.home.packages;
      sessionVariables = cfg.home.sessionVariables;
      service = cfg.systemd.user.services.hermes-agent or null;
      launchd = cfg.launchd.agents.hermes-agent or null;
    }));

  # --- the sample (no arguments): what nix/README.md shows ------------------------------------
  pkgs = mkPkgs false;
  sample = {
    enable = true;
    extraPlugins = [
      ../../plugins/hello-world
      { package = drv "source"; key = "weather"; grants = [ "tools.override" ]; settings.units = "metric"; required = true; }
      { package = drv "hermes-lcm-1.2.0"; key = "hermes-lcm"; enable = false; }
    ];
    extraNodePackages = [ "${drv "hermes-plugin-search-0.3.0"}/lib/node_modules/hermes-plugin-search" ];
    settings = { model.default = "anthropic/claude-sonnet-4"; plugins.disabled = [ "legacy" ]; };
    profiles.work = {
      extraPlugins = [ ../../plugins/hello-world ];
      settings.model.default = "openai/gpt-5";
      listPolicy = "replace";
    };
    environmentFile = "/run/secrets/hermes-agent.env";
    extraPackages = [ pkgs.ripgrep ];
    service.enable = true;
  };

  # services.hermes-agent.* as documentation rows (what nix/README.md's option table shows).
  optionsDoc = opts: map (o: {
    inherit (o) name type description;
    default = o.default.text or null;
    example = o.example.text or null;
    declaredIn = map (d: baseNameOf (toString d)) o.declarations;
  }) (lib.filter (o: lib.hasPrefix "services.hermes-agent." o.name && o.visible && !o.internal)
        (lib.optionAttrSetToDocList opts.services.hermes-agent));

  sampleConfig = { services.hermes-agent = sample; };
in
if configurations == null then {
  options = {
    nixos = optionsDoc (evalKind { kind = "nixos"; config = sampleConfig; }).options;
    home-manager = optionsDoc (evalKind { kind = "home-manager"; config = sampleConfig; }).options;
  };
  nixos = report { kind = "nixos"; config = sampleConfig; };
  home-manager = report { kind = "home-manager"; config = sampleConfig; };
}
else lib.mapAttrs (_: c: if c.strict or false then (checked (evalKind c).config).services.hermes-agent.enable else report c)
  (configurations { pkgs = mkPkgs false; inherit drv; })
