# Import nixpkgs' lib from a folder; on a Nix older than 2.14 (Debian's nix-bin 2.8) supply the
# one builtin lib.fileset needs, readFileType, from readDir.
libDir:
if builtins ? readFileType then import libDir
else
  let
    shim = builtins // { readFileType = p: (builtins.readDir (dirOf p)).${baseNameOf p}; };
    scope = { builtins = shim; import = f: scopedImport scope f; };
  in scopedImport scope libDir
