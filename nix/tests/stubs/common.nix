# Shared by the NixOS and home-manager stubs: assertions/warnings and systemd's value type.
{ lib }:
let
  inherit (lib) mkOption types;
  isAtom = v: builtins.isBool v || builtins.isInt v || builtins.isString v || builtins.isPath v;
in
{
  assertionsModule = {
    options.assertions = mkOption { type = types.listOf types.unspecified; default = [ ]; };
    options.warnings = mkOption { type = types.listOf types.str; default = [ ]; };
  };

  # A unit setting: an atom or a list of atoms; lists from several definitions concatenate, atoms
  # must agree (as NixOS and home-manager merge unit options).
  unitOption = types.mkOptionType {
    name = "systemd option";
    description = "systemd unit setting (bool, int, string, path or a list of them)";
    check = v: isAtom v || (builtins.isList v && builtins.all isAtom v);
    merge = loc: defs:
      if builtins.any (d: builtins.isList d.value) defs
      then lib.concatMap (d: lib.toList d.value) defs
      else lib.mergeEqualOption loc defs;
  };
}
