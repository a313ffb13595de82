# The option set shared by the NixOS and home-manager modules (the original's moduleCommon):
# plugins, npm plugin packages, settings, list policy, profiles, secrets, extra packages, the
# Python packages of Python plugins (one HERMES_PYTHON for the service, the activation and the CLI) and the
# service (`hermes serve`: host, port, arguments), plus what they render: one deploy spec per home
# (nix/lib.nix), the activation script (nix/activate.sh) that applies them with
# `hermes compile --managed <kind>`, and the service's command line and stop timeout.
#
# Import with the deployer's kind: `imports = [ (import ./module.nix { kind = "nixos"; }) ];`.
# The wrappers (nixos.nix, home-manager.nix) add `home` and what only their platform has.
{ kind }:
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption types literalExpression literalMD mkIf concatMap mapAttrsToList;
  hermesLib = import ./lib.nix;
  cfg = config.services.hermes-agent;

  # The values pkgs.formats.json accepts, without needing pkgs to evaluate the option types.
  jsonValue = types.nullOr (types.oneOf [ types.bool types.int types.float types.str types.path (types.attrsOf jsonValue) (types.listOf jsonValue) ])
    // { description = "JSON value"; };

  pluginValue = types.oneOf [ types.package types.path ];

  pluginEntry = types.submodule {
    options = {
      package = mkOption {
        type = pluginValue;
        description = "The plugin folder (holding `plugin.yaml`; for `extraNodePackages`, the npm package folder holding `package.json`): a path, a derivation or a store path.";
        example = literalExpression ''pkgs.fetchFromGitHub { owner = "me"; repo = "hermes-weather"; rev = "…"; hash = "…"; }'';
      };
      enable = mkOption {
        type = types.bool;
        default = true;
        description = "Add the plugin's key to `plugins.enabled` (owned by this deployment). `false` links the plugin without enabling it; a person may still enable it.";
        example = false;
      };
      grants = mkOption {
        type = types.listOf (types.enum hermesLib.capabilities);
        default = [ ];
        description = "Capabilities granted declaratively (consent `declarative` in the lock). Each must be declared in the plugin's manifest; the grant is bound to the hash of the declared set, so a plugin update that adds a capability is refused until it is granted here.";
        example = [ "tools.override" ];
      };
      settings = mkOption {
        type = types.attrsOf jsonValue;
        default = { };
        description = "Written to `plugins.entries.<key>.settings` in config.yaml (owned by this deployment).";
        example = { units = "metric"; };
      };
      required = mkOption {
        type = types.bool;
        default = false;
        description = "Fail closed: the runtime refuses to start without this plugin.";
        example = true;
      };
      key = mkOption {
        type = types.nullOr types.str;
        default = null;
        description = "The plugin key (the manifest `name`), stated so that duplicate keys are caught at evaluation time also for derivations, whose manifest cannot be read without building them. Path values are read at evaluation time; `hermes compile` checks every key again at activation.";
        example = "weather";
      };
    };
  };

  # A bare path or derivation is shorthand for `{ package = …; }`.
  entryType = types.coercedTo pluginValue (p: { package = p; }) pluginEntry;

  pluginListOption = what: example: mkOption {
    type = types.listOf entryType;
    default = [ ];
    inherit example;
    description = ''
      ${what} Each entry is a path or derivation, or an attrset
      `{ package, enable ? true, grants ? [ ], settings ? { }, required ? false, key ? null }`.
      `hermes compile` names each link after the plugin key (never the derivation name); removing an entry
      removes its link at the next activation, and one bad entry changes nothing (the home keeps its previous generation).
    '';
  };

  extraPluginsOption = pluginListOption "Plugin folders (each holding `plugin.yaml`) linked as `plugins/nix-managed-<key>`."
    (literalExpression ''
      [
        ./plugins/my-guard
        pkgs.hermes-plugins.weather
        { package = inputs.lcm.packages.''${system}.default; grants = [ "tools.override" ]; required = true; key = "hermes-lcm"; }
      ]
    '');

  extraNodePackagesOption = pluginListOption "npm packages holding plugins (`package.json` with a `hermes-plugin` field), the twin of the original's `extraPythonPackages`; linked as `node_modules/<package name>`. Give the package folder, e.g. `\"\${drv}/lib/node_modules/<name>\"` for a `buildNpmPackage` derivation."
    (literalExpression ''[ "''${pkgs.hermes-plugin-search}/lib/node_modules/hermes-plugin-search" ]'');

  settingsOption = mkOption {
    type = types.attrsOf jsonValue;
    default = { };
    description = ''
      config.yaml overlay (freeform). Every leaf declared here is owned by the deployment: it wins at each
      activation and imperative changes (`hermes plugins enable`, config writes through the CLI or a plugin) refuse to change it;
      keys not declared stay the user's. Lists merge by `listPolicy`. Plugins listed in `extraPlugins` are
      enabled through their `enable` flag, not here.
    '';
    example = literalExpression ''{ model.default = "anthropic/claude-sonnet-4"; plugins.disabled = [ "hello-world" ]; }'';
  };

  listPolicyOption = mkOption {
    type = types.enum hermesLib.listPolicies;
    default = "union";
    description = ''
      How lists in `settings` (and `plugins.enabled`) merge with the user's lists.
      `union`: the user's items stay and the deployment's are added; items this deployment added earlier and no longer declares are removed.
      `replace`: the deployment's list replaces the user's.
    '';
    example = "replace";
  };

  shellHookEntry = types.submodule {
    options = {
      command = mkOption {
        type = types.str;
        description = "The command (split like a POSIX shell, nothing expanded); the hook's payload is JSON on its stdin, its JSON stdout the callback's return.";
        example = "/etc/hermes/agent-hooks/block-rm-rf.sh";
      };
      matcher = mkOption {
        type = types.nullOr types.str;
        default = null;
        description = "A regular expression the tool name must match (only for hooks whose payload names a tool, such as `pre_tool_call`).";
        example = "terminal|write_file";
      };
      timeout = mkOption {
        type = types.nullOr (types.addCheck types.number (t: t > 0 && t <= 300));
        default = null;
        description = "Seconds (at most 300, default 60) before the command's process group is killed and the call counts as failed.";
        example = 10;
      };
    };
  };

  hooksOption = mkOption {
    type = types.attrsOf (types.listOf shellHookEntry);
    default = { };
    description = ''
      Shell hooks: written to the top-level `hooks` of config.yaml (owned by this deployment, like `settings`). Per hook
      name, the commands run after the plugins' callbacks of that hook, owners `shell:<index>`.
    '';
    example = literalExpression ''{ pre_tool_call = [ { matcher = "terminal"; command = "''${./hooks/block-rm-rf.sh}"; timeout = 5; } ]; }'';
  };

  eventHooksOption = mkOption {
    type = types.listOf pluginValue;
    default = [ ];
    description = "Gateway event hook folders (each with `HOOK.yaml` and `handler.js`), compiled into the lock with their integrity and run by `hermes serve` beside the home's own `hooks/<name>/`.";
    example = literalExpression "[ ./hooks/session-audit ]";
  };

  profileModule = { name, ... }: {
    options = {
      home = mkOption {
        type = types.str;
        default = "${cfg.home}/profiles/${name}";
        defaultText = literalExpression ''"''${config.services.hermes-agent.home}/profiles/<name>"'';
        description = "The profile's Hermes home (what `hermes --profile <name>` uses).";
        example = "/var/lib/hermes/.hermes/profiles/work";
      };
      extraPlugins = extraPluginsOption;
      extraNodePackages = extraNodePackagesOption;
      settings = settingsOption;
      listPolicy = listPolicyOption;
      hooks = hooksOption;
      eventHooks = eventHooksOption;
    };
  };

  # One rendered spec per home: main first, then the profiles by name.
  homes = [ { name = "main"; inherit (cfg) home extraPlugins extraNodePackages settings listPolicy hooks eventHooks; } ]
    ++ mapAttrsToList (name: p: { name = "profile-${name}"; inherit (p) home extraPlugins extraNodePackages settings listPolicy hooks eventHooks; }) cfg.profiles;

  # A shell hook entry without its unset (null) fields, as config.yaml's schema wants it.
  shellHooksOf = hooks: lib.mapAttrs (_: map (lib.filterAttrs (_: v: v != null))) hooks;

  specArgs = h: {
    plugins = h.extraPlugins;
    npmPackages = h.extraNodePackages;
    settings = h.settings // lib.optionalAttrs (h.hooks != { }) { hooks = shellHooksOf h.hooks; };
    eventHooks = h.eventHooks;
    inherit (h) listPolicy;
  };

  specFile = h: pkgs.writeTextFile {
    name = "hermes-deploy-spec-${h.name}.json";
    text = hermesLib.toDeploySpecJSON (specArgs h);
    # Build time: the spec must compile (manifests exist, keys unique, grants declared) before it
    # can reach an activation. A dry run writes nothing.
    checkPhase = lib.optionalString cfg.checkSpec ''
      HOME="$TMPDIR" ${cfg.package}/bin/hermes --home "$TMPDIR/hermes-check" compile --spec "$target" --dry-run >/dev/null
    '';
  };

  specs = map (h: h // { spec = specFile h; }) homes;

  emptySpec = pkgs.writeText "hermes-deploy-spec-release.json" (hermesLib.toDeploySpecJSON { });

  profileNameOk = n: builtins.match "[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}" n != null && n != "default";

  whereOf = h: if h.name == "main" then "services.hermes-agent" else "services.hermes-agent.profiles.${lib.removePrefix "profile-" h.name}";

  dupAssertions = concatMap (h:
    let dups = hermesLib.describeDuplicates (h.extraPlugins ++ h.extraNodePackages);
    in [{
      assertion = dups == [ ];
      message = "${whereOf h}.extraPlugins: duplicate plugin keys: ${lib.concatStringsSep "; " dups}. Each plugin key may be linked once per home.";
    }]) homes;

  # Per entry: a capability granted twice, or a stated key the manifest contradicts (path values).
  entryAssertions = concatMap (h:
    concatMap (list: lib.concatLists (
      lib.imap0 (i: e:
        let
          where = "${whereOf h}.${list}.[${toString i}] (${toString e.package})";
          dup = hermesLib.duplicatesOf e.grants;
          mismatch = hermesLib.keyMismatch e;
        in [
          { assertion = dup == [ ]; message = "${where}.grants: capability '${lib.head dup}' is granted more than once; list each capability once."; }
          { assertion = mismatch == null; message = "${where}.key: ${toString mismatch}."; }
        ]) h.${list}))
      [ "extraPlugins" "extraNodePackages" ]) homes;

  # The CLI, or null when no package is known: a disabled module must still evaluate without one.
  packageOrNull = let t = builtins.tryEval cfg.package; in if t.success then t.value else null;

  # Python plugins run under HERMES_PYTHON (the package's wrapper defaults it to its bare `python`);
  # with extraPythonPackages it is an environment of the kit's Python holding them.
  python = cfg.package.python or pkgs.python3;
  pythonEnv = if cfg.extraPythonPackages == [ ] then null else python.withPackages (_: cfg.extraPythonPackages);
  pythonEnvironment = lib.optionalAttrs (pythonEnv != null) { HERMES_PYTHON = "${pythonEnv}/bin/python3"; };
  pythonExports = lib.concatStrings (mapAttrsToList (n: v: "export ${n}=${lib.escapeShellArg v}\n") pythonEnvironment);

  # The `hermes` the wrappers put on PATH: the package, or with extraPythonPackages the package
  # wrapped to default HERMES_PYTHON to the environment (a user's own HERMES_PYTHON still wins).
  cli = if pythonEnv == null then cfg.package else pkgs.symlinkJoin {
    name = "hermes-kit-with-python-packages";
    paths = [ cfg.package ];
    nativeBuildInputs = [ pkgs.makeWrapper ];
    postBuild = ''
      rm $out/bin/hermes
      makeWrapper ${cfg.package}/bin/hermes $out/bin/hermes --set-default HERMES_PYTHON ${pythonEnv}/bin/python3
    '';
    meta.mainProgram = "hermes";
  };

  # python.withPackages silently drops what is not a Python module, and links a package built for
  # another Python version where the interpreter never looks: refuse both at evaluation.
  pythonAssertions = lib.imap0 (i: p:
    let
      where = "services.hermes-agent.extraPythonPackages.[${toString i}] (${p.name or "?"})";
      want = python.pythonVersion or null;
      have = p.pythonModule.pythonVersion or null;
    in
    if !(p ? pythonModule) then {
      assertion = false;
      message = "${where} is not a Python package (it has no pythonModule): take Python packages from config.services.hermes-agent.package.python.pkgs, wrap your own with python.pkgs.toPythonModule, and put programs in extraPackages.";
    } else {
      assertion = want == null || have == null || want == have;
      message = "${where} is built for Python ${toString have}, but the kit's Python is ${toString want}: take it from config.services.hermes-agent.package.python.pkgs.";
    }) cfg.extraPythonPackages;

  # `hermes serve` listens without a bearer key only on a loopback address (anything else needs
  # API_SERVER_KEY in its environment): the rule of src/gateway/settings.ts's isLoopback.
  isLoopback = host:
    let h = lib.toLower (lib.removePrefix "[" (lib.removeSuffix "]" host));
    in h == "localhost" || h == "::1" || builtins.match "127([.][0-9]{1,3}){3}" h != null;

  # The service's command: the main home, `service.args` (the subcommand), then host and port.
  serviceCommand = [ "${cfg.package}/bin/hermes" "--home" cfg.home ] ++ cfg.service.args
    ++ [ "--host" cfg.service.host "--port" (toString cfg.service.port) ];

  # After SIGTERM `hermes serve` waits gateway.shutdown_grace_seconds (an integer ≥ 0, else 30) for
  # the turns in flight; the service manager waits 15 s longer before it kills the process.
  shutdownGrace =
    let g = cfg.settings.gateway.shutdown_grace_seconds or 30;
    in if builtins.isInt g && g >= 0 then g else 30;
  stopTimeout = shutdownGrace + 15;

  # `--host`/`--port` in service.args would fight the options (the module appends its own).
  argsListen = lib.filter (a: lib.elem a [ "--host" "--port" ] || lib.hasPrefix "--host=" a || lib.hasPrefix "--port=" a) cfg.service.args;

  serviceAssertions = [
    {
      assertion = isLoopback cfg.service.host || cfg.environmentFile != null;
      message = "services.hermes-agent.service.host = \"${cfg.service.host}\" is not a loopback address, and `hermes serve` refuses to listen there without a bearer key in API_SERVER_KEY: set services.hermes-agent.environmentFile to a file (written at run time, outside the Nix store) holding API_SERVER_KEY=<key>, or set service.host = \"127.0.0.1\".";
    }
    {
      assertion = !(cfg.service.environment ? API_SERVER_KEY);
      message = "services.hermes-agent.service.environment.API_SERVER_KEY would put the key in the world-readable Nix store; put API_SERVER_KEY=<key> in the file services.hermes-agent.environmentFile names.";
    }
    {
      assertion = argsListen == [ ];
      message = "services.hermes-agent.service.args contains ${lib.concatStringsSep " " argsListen}: set services.hermes-agent.service.host and service.port instead (the module passes `--host <host> --port <port>` after service.args).";
    }
  ];

  activateArgs = hermes: [ "--hermes" "${hermes}/bin/hermes" "--kind" kind "--release-spec" "${emptySpec}" ]
    ++ lib.optionals cfg.enable (concatMap (s: [ "--home" s.name s.home "${s.spec}" ]) specs);
in
{
  options.services.hermes-agent = {
    enable = lib.mkEnableOption "hermes-kit: declarative Hermes agent plugins (links, lock and config.yaml overlay applied by `hermes compile` at activation)";

    package = mkOption {
      type = types.package;
      default = pkgs.hermes-kit or (throw "services.hermes-agent.package: add hermes-kit's overlay (overlays.default) or set this option; the flake's modules set it for you");
      defaultText = literalMD "the flake's `packages.<system>.default` (with the flake's modules), else `pkgs.hermes-kit` from `overlays.default`";
      description = "The hermes-kit package whose `hermes` CLI compiles the homes (and, with `service.enable`, serves).";
      example = literalExpression "inputs.hermes-kit.packages.\${pkgs.system}.default";
    };

    extraPlugins = extraPluginsOption;
    extraNodePackages = extraNodePackagesOption;
    settings = settingsOption;
    listPolicy = listPolicyOption;
    hooks = hooksOption;
    eventHooks = eventHooksOption;

    extraPythonPackages = mkOption {
      type = types.listOf types.package;
      default = [ ];
      description = ''
        Python packages that Python plugins (`plugin.yaml` + `__init__.py`) can import: the declarative
        alternative to the virtual environments `pip_dependencies` get at compile time. When the list is not
        empty, the module builds `package.python.withPackages (_: extraPythonPackages)` and sets `HERMES_PYTHON`
        to its `bin/python3` for the service, for the activation's `hermes compile` and for the `hermes` CLI it
        installs, so the bridge runs every Python plugin of every home (profiles included) under that
        interpreter. Take the packages from `config.services.hermes-agent.package.python.pkgs` (the kit's
        Python): evaluation fails for a package that is not a Python package or is built for another Python
        version. Unlike the original, a package's `hermes_agent.plugins` entry points are not loaded as
        plugins; link plugin folders with `extraPlugins`.
      '';
      example = literalExpression "with config.services.hermes-agent.package.python.pkgs; [ requests pyyaml ]";
    };

    profiles = mkOption {
      type = types.attrsOf (types.submodule profileModule);
      default = { };
      description = ''
        Profiles: each is an independent Hermes home (default `<home>/profiles/<name>`, what `hermes --profile <name>` uses)
        with its own plugins, settings and list policy, compiled at each activation like the main home. A profile
        removed from the configuration is released at the next activation: its links go, and the settings and list
        items it owned are handed back. Names follow the CLI's rule (`[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}`, not `default`).
      '';
      example = literalExpression ''{ work = { extraPlugins = [ ./plugins/jira ]; settings.model.default = "openai/gpt-5"; }; }'';
    };

    environmentFile = mkOption {
      type = types.nullOr types.str;
      default = null;
      description = ''
        A file of `NAME=value` lines (API keys and other secrets) given to the service as systemd's
        `EnvironmentFile` (on macOS sourced by a shell before `hermes` starts): the model providers' keys, and
        `API_SERVER_KEY`, the bearer key `hermes serve` requires when `service.host` is not a loopback address.
        A string on purpose: it is never copied into the world-readable store. Use a path that your secret manager
        (agenix, sops-nix) writes at run time.
      '';
      example = "/run/secrets/hermes-agent.env";
    };

    extraPackages = mkOption {
      type = types.listOf types.package;
      default = [ ];
      description = "Programs on the agent's PATH (the service's `path`; on NixOS also the service user's packages when the module creates the user; on home-manager `home.packages`).";
      example = literalExpression "[ pkgs.ripgrep pkgs.git ]";
    };

    keepHomesWhenDisabled = mkOption {
      type = types.bool;
      default = false;
      description = ''
        What turning `enable` off does to the homes an earlier activation managed. `false`: the next activation
        releases each of them (an empty spec removes the `nix-managed-*` links and hands back the settings and list
        items the deployment owned; the user's plugins and keys stay, and `.managed` goes). `true`: they are left
        exactly as the last activation compiled them (links, lock, owned keys) and are no longer updated.
      '';
      example = true;
    };

    checkSpec = mkOption {
      type = types.bool;
      default = true;
      description = ''
        Check each rendered deploy spec at build time with `hermes compile --spec … --dry-run` on an empty home:
        a missing `plugin.yaml`, a duplicate key or a grant the manifest does not declare fails the build, before
        anything is activated. Turn off only to build a configuration whose plugins are not buildable here.
      '';
      example = false;
    };

    service = {
      enable = mkOption {
        type = types.bool;
        default = true;
        description = ''
          Run the agent as a service: `hermes --home <home> serve --host <host> --port <port>`, the
          OpenAI-compatible HTTP API of the main home (sessions kept in `<home>/sessions/`). On NixOS a system
          unit run as `user`; with home-manager a systemd user unit (Linux) or a launchd agent (macOS). A new
          generation of the deploy specs reloads the service (SIGHUP) instead of restarting it, except on
          macOS, where launchd restarts the agent. Only with `enable`.
        '';
        example = false;
      };
      host = mkOption {
        type = types.nonEmptyStr;
        default = "127.0.0.1";
        description = ''
          The address `hermes serve` listens on (`--host`; it overrides `gateway.api_server.host` of config.yaml).
          Any address but a loopback one (`127.0.0.0/8`, `::1`, `localhost`) needs a bearer key: the service
          refuses to start without `API_SERVER_KEY`, so evaluation fails unless `environmentFile` is set.
        '';
        example = "0.0.0.0";
      };
      port = mkOption {
        type = types.port;
        default = 8642;
        description = "The TCP port `hermes serve` listens on (`--port`; it overrides `gateway.api_server.port` of config.yaml).";
        example = 8080;
      };
      args = mkOption {
        type = types.listOf types.str;
        default = [ "serve" ];
        description = ''
          The service's `hermes` subcommand and its flags: the command is `hermes --home <home> <args…> --host
          <host> --port <port>`. Set the address with `host` and `port`, never here (evaluation refuses
          `--host` and `--port` in `args`).
        '';
        example = [ "serve" "--watch" ];
      };
      environment = mkOption {
        type = types.attrsOf types.str;
        default = { };
        description = "Extra environment of the service (never secrets such as `API_SERVER_KEY`: use `environmentFile`).";
        example = { HERMES_LOG_LEVEL = "info"; };
      };
      hardening = mkOption {
        type = types.bool;
        default = true;
        description = ''
          Sandbox the service with systemd: read-only system, private /tmp and devices, no new privileges, no
          capabilities, kernel and control-group protection, a system-call filter, and write access to the Hermes
          homes only (`MemoryDenyWriteExecute` stays off: Node's JIT needs it). Every setting is a default that
          `service.serviceConfig` (NixOS) can override one by one.
        '';
        example = false;
      };
    };

    build = mkOption {
      internal = true;
      # Lazy: the wrappers' `activation` is built from `mkActivationScript`, defined here.
      type = types.lazyAttrsOf types.unspecified;
      description = "What the module renders (specs per home, the activation script); for the wrappers, checks and tests. The wrappers add `activation`, the script their activation entry runs.";
    };
  };

  config = lib.mkMerge [
    {
      # Always rendered (lazily): the wrappers also need the release-only activation of a disabled module.
      services.hermes-agent.build = {
        inherit specs emptySpec;
        package = packageOrNull;
        specArgs = map specArgs homes;
        homes = map (h: h.home) homes;
        # The arguments nix/activate.sh gets (the wrappers add --run-as / --state and the PATH);
        # disabled, no home is declared, so every home in the state file is released.
        activateArgs = activateArgs cfg.package;
        # The service's argv (the wrappers quote it for their service manager) and the seconds it
        # may take to stop after SIGTERM.
        inherit serviceCommand stopTimeout isLoopback;
        # extraPythonPackages: the environment (or null), HERMES_PYTHON for the service, and the CLI to install.
        inherit pythonEnv pythonEnvironment cli;
        mkActivationScript = { extraArgs ? [ ], path ? [ ] }:
          let args = config.services.hermes-agent.build.activateArgs ++ extraArgs;
          in pkgs.writeShellScript "hermes-agent-activate" ''
            export PATH=${lib.makeBinPath path}''${PATH:+:$PATH}
            ${pythonExports}exec ${pkgs.bash}/bin/bash ${./activate.sh} ${lib.escapeShellArgs args} "$@"
          '' // { activateArgs = args; };
        # What a disabled module's activation runs: release through activate.sh, or, with no package
        # to run it, a warning when the state file still lists homes.
        mkReleaseScript = { state, extraArgs ? [ ], path ? [ ] }:
          if packageOrNull == null then
            pkgs.writeShellScript "hermes-agent-release" ''
              if [ -s ${lib.escapeShellArg state} ]; then
                echo "hermes-agent: services.hermes-agent is disabled but ${state} still lists managed homes; they are not released because services.hermes-agent.package is not set (set it, or keepHomesWhenDisabled = true)" >&2
              fi
            ''
          else config.services.hermes-agent.build.mkActivationScript { inherit path; extraArgs = extraArgs ++ [ "--state" state ]; };
      };
    }

    (mkIf cfg.enable {
      assertions = dupAssertions ++ entryAssertions ++ pythonAssertions ++ mapAttrsToList (name: _: {
        assertion = profileNameOk name;
        message = "services.hermes-agent.profiles.${name}: a profile name matches [A-Za-z0-9_-][A-Za-z0-9._-]{0,63} and is not `default`.";
      }) cfg.profiles ++ [
        {
          assertion = cfg.environmentFile == null || !(lib.hasPrefix builtins.storeDir cfg.environmentFile);
          message = "services.hermes-agent.environmentFile: ${toString cfg.environmentFile} is in the Nix store, which every user can read; give the path a secret manager writes at run time.";
        }
        {
          assertion = lib.hasPrefix "/" cfg.home;
          message = "services.hermes-agent.home must be an absolute path (got ${cfg.home}).";
        }
      ] ++ lib.optionals cfg.service.enable serviceAssertions;
    })
  ];
}
