# home-manager module: services.hermes-agent (shared options in ./module.nix).
#
# At each activation (`home-manager switch`, after linkGeneration and installPackages) nix/activate.sh runs
# `hermes compile --spec <store spec> --managed home-manager` as you for the main home and each
# profile, registers GC roots (through the Nix daemon) for the plugins every generation uses, and
# releases homes that are no longer declared. `home-manager switch --dry-run` (or build with
# DRY_RUN set) prints each home's plan and writes nothing.
#
# With service.enable (the default) `hermes serve` runs as a systemd user unit (Linux) or a launchd
# agent (macOS). The activation compiles before home-manager touches either (before reloadSystemd
# and setupLaunchAgents), so the service always starts or reloads on the new generation. On Linux the
# specs are the unit's X-Reload-Triggers: sd-switch reloads it (SIGHUP) when only they changed (an
# sd-switch without X-Reload-Triggers support restarts it). launchd has no reload: the specs are in
# the agent's environment (HERMES_DEPLOY_SPECS), so a new generation changes the plist and
# home-manager restarts the agent; `launchctl kill HUP gui/$UID/<label>` reloads by hand.
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption mkIf types literalExpression;
  cfg = config.services.hermes-agent;
  isDarwin = pkgs.stdenv.hostPlatform.isDarwin;
  command = cfg.build.serviceCommand;
  specPaths = map (s: "${s.spec}") cfg.build.specs;
  # The service's PATH: extraPackages, then the user's and the system's profiles.
  servicePath = lib.concatStringsSep ":" (map (p: "${p}/bin") cfg.extraPackages ++ [
    "${config.home.profileDirectory}/bin"
    "/run/current-system/sw/bin"
    "/usr/bin"
    "/bin"
  ]);
  state = "${config.xdg.stateHome}/hermes-agent/homes";
  path = [ pkgs.coreutils ] ++ lib.optional ((config.nix.package or null) != null) config.nix.package;
  activation = cfg.build.mkActivationScript { extraArgs = [ "--state" state ]; inherit path; };
  release = cfg.build.mkReleaseScript { inherit state path; };

  # After the new generation's files are linked and its packages installed: a refused spec then
  # leaves only that Hermes home on its previous generation, never the switch half-done. Before the
  # service managers are told about the new units: the service then (re)loads the new generation.
  entry = script: lib.hm.dag.entryBetween [ "reloadSystemd" "setupLaunchAgents" ] [ "writeBoundary" "linkGeneration" "installPackages" ] ''
    if [[ -v DRY_RUN ]]; then
      ${script} --dry-run
    else
      ${script}
    fi
  '';
in
{
  imports = [ (import ./module.nix { kind = "home-manager"; }) ];

  options.services.hermes-agent = {
    home = mkOption {
      type = types.str;
      default = "${config.home.homeDirectory}/.hermes";
      defaultText = literalExpression ''"''${config.home.homeDirectory}/.hermes"'';
      description = "The main Hermes home (`HERMES_HOME`): plugins, config.yaml, hermes.lock.json, generations.";
      example = literalExpression ''"''${config.xdg.dataHome}/hermes"'';
    };
    installPackage = mkOption {
      type = types.bool;
      default = true;
      description = "Put the `hermes` CLI (and `extraPackages`) in `home.packages`, and set `HERMES_HOME` in the session when `home` is not `~/.hermes`.";
      example = false;
    };
  };

  config = lib.mkMerge [
    (mkIf cfg.enable {
      # With extraPythonPackages the CLI defaults HERMES_PYTHON to their environment, as the service.
      home.packages = lib.optional cfg.installPackage cfg.build.cli ++ cfg.extraPackages;
      home.sessionVariables = mkIf (cfg.installPackage && cfg.home != "${config.home.homeDirectory}/.hermes") { HERMES_HOME = cfg.home; };

      home.activation.hermesAgent = entry activation;
      services.hermes-agent.build.activation = activation;

      systemd.user.services.hermes-agent = mkIf (cfg.service.enable && !isDarwin) {
        Unit = {
          Description = "Hermes agent (hermes-kit): hermes serve";
          # sd-switch reloads (ExecReload) a unit whose only change is this list: a new generation.
          X-Reload-Triggers = specPaths;
        };
        Service = {
          ExecStart = lib.escapeShellArgs command;
          # SIGHUP: `hermes serve` loads the current generation of the home's lock, no restart.
          ExecReload = "${pkgs.coreutils}/bin/kill -HUP $MAINPID";
          Environment = lib.mapAttrsToList (n: v: "${n}=${v}") ({
            HERMES_HOME = cfg.home;
            HERMES_MANAGED = "home-manager";
            PATH = servicePath;
          } // cfg.build.pythonEnvironment // cfg.service.environment);
          Restart = "on-failure";
          RestartSec = 5;
          # SIGTERM stops it gracefully (gateway.shutdown_grace_seconds, default 30) before SIGKILL.
          TimeoutStopSec = cfg.build.stopTimeout;
          UMask = "0077";
        } // lib.optionalAttrs (cfg.environmentFile != null) { EnvironmentFile = cfg.environmentFile; }
          // lib.optionalAttrs cfg.service.hardening {
          NoNewPrivileges = true;
          PrivateTmp = true;
          ProtectSystem = "strict";
          ReadWritePaths = cfg.build.homes;
          LockPersonality = true;
          RestrictRealtime = true;
          RestrictSUIDSGID = true;
          SystemCallArchitectures = "native";
        };
        Install.WantedBy = [ "default.target" ];
      };

      # launchd has no EnvironmentFile: with environmentFile set, the agent sources it through a shell.
      launchd.agents.hermes-agent = mkIf (cfg.service.enable && isDarwin) {
        enable = true;
        config = {
          ProgramArguments =
            if cfg.environmentFile == null then command
            else [ "${pkgs.bash}/bin/bash" "-c" ''set -a; . ${lib.escapeShellArg cfg.environmentFile}; set +a; exec "$@"'' "hermes-agent" ] ++ command;
          EnvironmentVariables = {
            HERMES_HOME = cfg.home;
            HERMES_MANAGED = "home-manager";
            PATH = servicePath;
            # Not read by hermes: a new generation changes the plist, so home-manager restarts the
            # agent on it (launchd has no reload).
            HERMES_DEPLOY_SPECS = lib.concatStringsSep " " specPaths;
          } // cfg.build.pythonEnvironment // cfg.service.environment;
          # Restart=on-failure: started at login, restarted when it exits unsuccessfully.
          RunAtLoad = true;
          KeepAlive = { SuccessfulExit = false; };
          # Seconds between SIGTERM and SIGKILL.
          ExitTimeOut = cfg.build.stopTimeout;
          StandardOutPath = "${config.home.homeDirectory}/Library/Logs/hermes-agent.log";
          StandardErrorPath = "${config.home.homeDirectory}/Library/Logs/hermes-agent.log";
          ProcessType = "Background";
        };
      };
    })

    # Disabled: release every home the state file lists (unless keepHomesWhenDisabled).
    (mkIf (!cfg.enable && !cfg.keepHomesWhenDisabled) {
      home.activation.hermesAgent = entry release;
      services.hermes-agent.build.activation = release;
    })
  ];
}
