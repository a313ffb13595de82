# Stand-ins for the home-manager options nix/home-manager.nix sets, typed like home-manager
# declares them; `home.activation` is a DAG holding home-manager's own entries with their order
# constraints, so the harness can sort it as `home-manager switch` does. Needs `lib.hm.dag`
# (nix/tests/stubs/hm-lib.nix).
{ lib, pkgs, config, ... }:
let
  inherit (lib) mkOption types;
  common = import ./common.nix { inherit lib; };

  dagEntry = types.submodule {
    options = {
      data = mkOption { type = types.str; };
      after = mkOption { type = types.listOf types.str; default = [ ]; };
      before = mkOption { type = types.listOf types.str; default = [ ]; };
    };
  };
  # A bare string is an entry with no order constraint.
  dagOf = types.attrsOf (types.coercedTo types.str lib.hm.dag.entryAnywhere dagEntry);

  unitType = types.attrsOf (types.attrsOf common.unitOption);

  launchdAgent = types.submodule {
    options = {
      enable = mkOption { type = types.bool; default = false; };
      config = mkOption {
        default = { };
        type = types.submodule {
          options = {
            ProgramArguments = mkOption { type = types.nullOr (types.listOf types.str); default = null; };
            EnvironmentVariables = mkOption { type = types.nullOr (types.attrsOf types.str); default = null; };
            KeepAlive = mkOption { type = types.nullOr (types.either types.bool (types.attrsOf types.bool)); default = null; };
            RunAtLoad = mkOption { type = types.nullOr types.bool; default = null; };
            ProcessType = mkOption { type = types.nullOr (types.enum [ "Background" "Standard" "Adaptive" "Interactive" ]); default = null; };
            ExitTimeOut = mkOption { type = types.nullOr types.int; default = null; };
            StandardOutPath = mkOption { type = types.nullOr types.path; default = null; };
            StandardErrorPath = mkOption { type = types.nullOr types.path; default = null; };
          };
        };
      };
    };
  };
in
{
  imports = [ common.assertionsModule ];

  options = {
    home.homeDirectory = mkOption { type = types.path; default = "/home/alice"; };
    home.profileDirectory = mkOption { type = types.path; default = "${config.home.homeDirectory}/.nix-profile"; };
    home.packages = mkOption { type = types.listOf types.package; default = [ ]; };
    home.sessionVariables = mkOption { type = types.lazyAttrsOf (types.oneOf [ types.str types.path types.int types.float ]); default = { }; };
    home.activation = mkOption { type = dagOf; default = { }; };
    xdg.stateHome = mkOption { type = types.path; default = "${config.home.homeDirectory}/.local/state"; };
    systemd.user.services = mkOption { type = types.attrsOf unitType; default = { }; };
    launchd.agents = mkOption { type = types.attrsOf launchdAgent; default = { }; };
    nix.package = mkOption { type = types.nullOr types.package; default = null; };
  };

  # home-manager's own activation entries and their order constraints: systemd's (re)starts the
  # user units on Linux, setupLaunchAgents (re)loads the changed agents on macOS.
  config.home.activation = {
    checkLinkTargets = lib.hm.dag.entryBefore [ "writeBoundary" ] "check-link-targets";
    writeBoundary = lib.hm.dag.entryAnywhere "write-boundary";
    installPackages = lib.hm.dag.entryAfter [ "writeBoundary" ] "install-packages";
    linkGeneration = lib.hm.dag.entryAfter [ "writeBoundary" ] "link-generation";
    onFilesChange = lib.hm.dag.entryAfter [ "linkGeneration" ] "on-files-change";
  } // (if pkgs.stdenv.hostPlatform.isDarwin then {
    setupLaunchAgents = lib.hm.dag.entryAfter [ "writeBoundary" ] "setup-launch-agents";
  } else {
    reloadSystemd = lib.hm.dag.entryAfter [ "linkGeneration" ] "reload-systemd";
  });
}
