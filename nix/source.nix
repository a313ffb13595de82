# The files nix/package.nix builds from: what `npm pack` ships (package.json's `files`: schemas,
# plugins, docs, data, python) plus what `npm run build` needs to make dist/. test/nix/package.test.ts
# keeps this equal to `npm pack --dry-run` (README.md is left to npm: the registry shows it).
{ lib }:
lib.fileset.unions [
  # the build: tsc (src, tsconfig.json, tsconfig.types.json for the plugin types) and scripts/postbuild.mjs; the lock for the dependencies
  ../package.json
  ../package-lock.json
  ../tsconfig.json
  ../tsconfig.types.json
  ../src
  ../scripts
  # shipped as they are
  ../LICENSE
  ../schemas
  ../plugins
  ../docs
  # the bundled plugin index: offline `hermes plugins search`
  ../data
  # the Python plugin bridge (hermes_kit_bridge), without bytecode (package.json excludes *.pyc too)
  (lib.fileset.fileFilter (f: !f.hasExt "pyc") ../python)
]
