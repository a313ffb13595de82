# NixOS module: services.hermes-agent (shared options in ./module.nix).
#
# At each activation (boot and switch) the `hermes-agent` activation snippet runs
# nix/activate.sh as root, which runs `hermes compile --spec <store spec> --managed nixos` as the
# service user for the main home and each profile, registers GC roots for the plugins every
# generation uses, and releases homes that are no longer declared. A refused spec leaves that home on
# its previous generation and the switch reports "Activation script snippet 'hermes-agent' failed".
#
# With service.enable (the default) `systemd.services.hermes-agent` runs `hermes serve`. The deploy
# specs are its reloadTriggers: switch-to-configuration runs the activation (the new generation is
# compiled) before it touches units, then, when only the specs changed, reloads the unit: ExecReload
# sends SIGHUP and `hermes serve` loads the current generation of the home's lock, without a restart.
# Any other change to the unit (a new package in ExecStart, host, port, environment, the homes)
# restarts it.
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption mkIf mkDefault types literalExpression optionalAttrs;
  cfg = config.services.hermes-agent;
  homes = cfg.build.homes;
  state = "/var/lib/nixos/hermes-agent-homes";
  path = [ pkgs.coreutils pkgs.util-linux config.nix.package ];
  activation = cfg.build.mkActivationScript {
    extraArgs = [ "--run-as" "${cfg.user}:${cfg.group}" "--state" state ];
    inherit path;
  };
  # Disabled: no --run-as (the module's user may be gone); activate.sh releases each home as its owner.
  release = cfg.build.mkReleaseScript { inherit state path; };

  # systemd's StateDirectory= is relative to /var/lib; a stateDir elsewhere is made by tmpfiles.
  stateDirectory = if lib.hasPrefix "/var/lib/" cfg.stateDir then lib.removePrefix "/var/lib/" cfg.stateDir else null;

  snippet = script: {
    # update-users-groups (the `users` snippet) makes the user and group first.
    deps = [ "users" ];
    # `switch-to-configuration dry-activate` prints each home's plan and writes nothing.
    supportsDryActivation = true;
    text = ''
      if [ "''${NIXOS_ACTION:-}" = dry-activate ]; then
        ${script} --dry-run
      else
        ${script}
      fi
    '';
  };

  hardening = {
    NoNewPrivileges = true;
    ProtectSystem = "strict";
    ProtectHome = true;
    # The working directory and the homes (StateDirectory= alone covers only a stateDir under /var/lib).
    ReadWritePaths = lib.unique ([ cfg.stateDir ] ++ homes);
    PrivateTmp = true;
    PrivateDevices = true;
    ProtectKernelTunables = true;
    ProtectKernelModules = true;
    ProtectKernelLogs = true;
    ProtectControlGroups = true;
    ProtectClock = true;
    ProtectHostname = true;
    ProtectProc = "invisible";
    RestrictNamespaces = true;
    RestrictRealtime = true;
    RestrictSUIDSGID = true;
    LockPersonality = true;
    # Node's JIT writes executable memory.
    MemoryDenyWriteExecute = false;
    RemoveIPC = true;
    CapabilityBoundingSet = "";
    AmbientCapabilities = "";
    RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
    SystemCallArchitectures = "native";
    # Node calls pkey_alloc (memory protection keys), outside @system-service.
    SystemCallFilter = [ "@system-service" "@pkey" "~@privileged" "~@resources" ];
  };
in
{
  imports = [ (import ./module.nix { kind = "nixos"; }) ];

  options.services.hermes-agent = {
    user = mkOption {
      type = types.str;
      default = "hermes";
      description = "The user that owns the Hermes homes; `hermes compile` and the service run as this user.";
      example = "agent";
    };
    group = mkOption {
      type = types.str;
      default = "hermes";
      description = "The group of the Hermes homes and the service.";
      example = "agent";
    };
    createUser = mkOption {
      type = types.bool;
      default = true;
      description = "Create `user` (a system user whose home is `stateDir`) and `group`. Turn off to use an account declared elsewhere.";
      example = false;
    };
    stateDir = mkOption {
      type = types.str;
      default = "/var/lib/hermes";
      description = "The service user's home and working directory; the Hermes home is `<stateDir>/.hermes` unless `home` is set.";
      example = "/srv/hermes";
    };
    home = mkOption {
      type = types.str;
      default = "${cfg.stateDir}/.hermes";
      defaultText = literalExpression ''"''${config.services.hermes-agent.stateDir}/.hermes"'';
      description = "The main Hermes home (`HERMES_HOME`): plugins, config.yaml, hermes.lock.json, generations.";
      example = "/var/lib/hermes/.hermes";
    };
    addToSystemPackages = mkOption {
      type = types.bool;
      default = false;
      description = "Put the `hermes` CLI on every user's PATH (run it as the service user, e.g. `sudo -u hermes hermes --home /var/lib/hermes/.hermes plugins list`, so files keep their owner).";
      example = true;
    };
    service.openFirewall = mkOption {
      type = types.bool;
      default = false;
      description = "Open `service.port` in the firewall (`networking.firewall.allowedTCPPorts`), for a `service.host` other than a loopback address.";
      example = true;
    };
    service.serviceConfig = mkOption {
      type = types.attrsOf types.anything;
      default = { };
      description = "systemd `[Service]` settings merged over the module's (each hardening setting is a default, so one entry here overrides it).";
      example = { MemoryMax = "2G"; ProtectHome = "read-only"; };
    };
  };

  config = lib.mkMerge [
    (mkIf cfg.enable {
      users.users = optionalAttrs cfg.createUser {
        ${cfg.user} = {
          isSystemUser = true;
          inherit (cfg) group;
          home = cfg.stateDir;
          createHome = true;
          homeMode = "750";
          description = "Hermes agent (hermes-kit)";
          packages = cfg.extraPackages;
        };
      };
      users.groups = optionalAttrs cfg.createUser { ${cfg.group} = { }; };

      systemd.tmpfiles.rules = [ "d ${cfg.stateDir} 0750 ${cfg.user} ${cfg.group} - -" ];

      # With extraPythonPackages the CLI defaults HERMES_PYTHON to their environment, as the service.
      environment.systemPackages = lib.optional cfg.addToSystemPackages cfg.build.cli;

      assertions = [
        {
          assertion = cfg.createUser || config.users.users ? ${cfg.user};
          message = "services.hermes-agent.createUser is false, but services.hermes-agent.user = \"${cfg.user}\" is not declared in users.users.<name> (users.users.${cfg.user}); declare that account or set createUser = true.";
        }
        {
          assertion = cfg.createUser || config.users.groups ? ${cfg.group};
          message = "services.hermes-agent.createUser is false, but services.hermes-agent.group = \"${cfg.group}\" is not declared in users.groups.<name> (users.groups.${cfg.group}); declare that group or set createUser = true.";
        }
      ];

      system.activationScripts.hermes-agent = snippet activation;
      services.hermes-agent.build.activation = activation;

      systemd.services.hermes-agent = mkIf cfg.service.enable {
        description = "Hermes agent (hermes-kit): hermes serve";
        wantedBy = [ "multi-user.target" ];
        wants = [ "network-online.target" ];
        after = [ "network-online.target" ];
        path = cfg.extraPackages;
        environment = {
          HERMES_HOME = cfg.home;
          HERMES_MANAGED = "nixos";
        } // cfg.build.pythonEnvironment // cfg.service.environment;
        # A new spec (plugins, settings) reloads the agent after the activation compiled it: only the
        # specs change in the unit (X-Reload-Triggers). A new package changes ExecStart: a restart.
        reloadTriggers = map (s: s.spec) cfg.build.specs;
        serviceConfig = lib.mkMerge [
          {
            User = cfg.user;
            Group = cfg.group;
            ExecStart = lib.escapeShellArgs cfg.build.serviceCommand;
            # SIGHUP: `hermes serve` loads the current generation of the home's lock, no restart.
            ExecReload = "${pkgs.coreutils}/bin/kill -HUP $MAINPID";
            WorkingDirectory = cfg.stateDir;
            Restart = "on-failure";
            RestartSec = 5;
            # SIGTERM (systemd's default KillSignal) stops it gracefully: requests in flight get
            # gateway.shutdown_grace_seconds (default 30); systemd waits 15 s more before SIGKILL.
            TimeoutStopSec = cfg.build.stopTimeout;
            UMask = "0007";
          }
          (mkIf (stateDirectory != null) { StateDirectory = stateDirectory; StateDirectoryMode = "0750"; })
          (mkIf (cfg.environmentFile != null) { EnvironmentFile = cfg.environmentFile; })
          (mkIf cfg.service.hardening (lib.mapAttrs (_: mkDefault) hardening))
          cfg.service.serviceConfig
        ];
      };
    })

    (mkIf (cfg.enable && cfg.service.enable && cfg.service.openFirewall) {
      networking.firewall.allowedTCPPorts = [ cfg.service.port ];
      warnings = lib.optional (cfg.build.isLoopback cfg.service.host)
        "services.hermes-agent.service.openFirewall opens port ${toString cfg.service.port}, but service.host = \"${cfg.service.host}\" is a loopback address: nothing outside this machine can connect; set service.host (and environmentFile with API_SERVER_KEY) or drop openFirewall.";
    })

    # Disabled: release every home the state file lists (unless keepHomesWhenDisabled).
    (mkIf (!cfg.enable && !cfg.keepHomesWhenDisabled) {
      system.activationScripts.hermes-agent = snippet release;
      services.hermes-agent.build.activation = release;
    })
  ];
}
