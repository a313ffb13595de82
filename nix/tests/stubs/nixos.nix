# Stand-ins for the NixOS options nix/nixos.nix sets, typed like NixOS declares them (submodules
# without free-form attributes), so a misspelt or mistyped definition fails evaluation as it
# would on a real system. Used by nix/tests/eval-modules.nix with nixpkgs' `lib` only.
{ lib, pkgs, config, ... }:
let
  inherit (lib) mkOption types;
  common = import ./common.nix { inherit lib; };

  userModule = { name, config, ... }: {
    options = {
      name = mkOption { type = types.str; default = name; };
      uid = mkOption { type = types.nullOr types.int; default = null; };
      isSystemUser = mkOption { type = types.bool; default = false; };
      isNormalUser = mkOption { type = types.bool; default = false; };
      group = mkOption { type = types.str; default = ""; };
      extraGroups = mkOption { type = types.listOf types.str; default = [ ]; };
      description = mkOption { type = types.str; default = ""; };
      home = mkOption { type = types.either types.path types.str; default = "/var/empty"; };
      homeMode = mkOption { type = types.strMatching "[0-7]{1,5}"; default = "700"; };
      createHome = mkOption { type = types.bool; default = false; };
      shell = mkOption { type = types.nullOr (types.either types.package types.path); default = null; };
      packages = mkOption { type = types.listOf types.package; default = [ ]; };
    };
  };

  groupModule = { name, ... }: {
    options = {
      name = mkOption { type = types.str; default = name; };
      gid = mkOption { type = types.nullOr types.int; default = null; };
      members = mkOption { type = types.listOf types.str; default = [ ]; };
    };
  };

  serviceModule = { name, ... }: {
    options = {
      enable = mkOption { type = types.bool; default = true; };
      description = mkOption { type = types.singleLineStr; default = ""; };
      wantedBy = mkOption { type = types.listOf types.str; default = [ ]; };
      requiredBy = mkOption { type = types.listOf types.str; default = [ ]; };
      wants = mkOption { type = types.listOf types.str; default = [ ]; };
      requires = mkOption { type = types.listOf types.str; default = [ ]; };
      after = mkOption { type = types.listOf types.str; default = [ ]; };
      before = mkOption { type = types.listOf types.str; default = [ ]; };
      path = mkOption { type = types.listOf (types.oneOf [ types.package types.str ]); default = [ ]; };
      environment = mkOption { type = types.attrsOf (types.nullOr (types.oneOf [ types.str types.path types.package ])); default = { }; };
      restartTriggers = mkOption { type = types.listOf types.unspecified; default = [ ]; };
      reloadTriggers = mkOption { type = types.listOf types.unspecified; default = [ ]; };
      script = mkOption { type = types.lines; default = ""; };
      unitConfig = mkOption { type = types.attrsOf common.unitOption; default = { }; };
      serviceConfig = mkOption { type = types.attrsOf common.unitOption; default = { }; };
    };
  };

  activationScript = types.either types.str (types.submodule {
    options = {
      text = mkOption { type = types.lines; };
      deps = mkOption { type = types.listOf types.str; default = [ ]; };
      supportsDryActivation = mkOption { type = types.bool; default = false; };
    };
  });
in
{
  imports = [ common.assertionsModule ];

  options = {
    users.users = mkOption { type = types.attrsOf (types.submodule userModule); default = { }; };
    users.groups = mkOption { type = types.attrsOf (types.submodule groupModule); default = { }; };
    systemd.services = mkOption { type = types.attrsOf (types.submodule serviceModule); default = { }; };
    systemd.tmpfiles.rules = mkOption { type = types.listOf types.str; default = [ ]; };
    environment.systemPackages = mkOption { type = types.listOf types.package; default = [ ]; };
    system.activationScripts = mkOption { type = types.attrsOf activationScript; default = { }; };
    nix.package = mkOption { type = types.package; default = pkgs.nix; };
    networking.firewall.allowedTCPPorts = mkOption { type = types.listOf types.port; default = [ ]; };
  };

  # What NixOS checks about accounts, in its own words' spirit: each user is system xor normal and
  # a system user names a group.
  config.assertions = lib.concatLists (lib.mapAttrsToList (name: u: [
    { assertion = u.isSystemUser != u.isNormalUser; message = "users.users.${name}: exactly one of isSystemUser and isNormalUser must be set."; }
    { assertion = !u.isSystemUser || u.group != ""; message = "users.users.${name}.group is unset."; }
  ]) config.users.users);
}
