# hermes-kit, built from package.json and package-lock.json with nixpkgs' importNpmLock: every
# tarball is fetched by the integrity hash the lock already records, so there is no hand-kept
# npmDepsHash to update when dependencies change.
#
# The lock may omit `resolved` URLs for the default registry (npm's `omit-lockfile-registry-resolved`,
# set on this project's machines). importNpmLock needs a URL per package, so the missing ones are
# rebuilt from name and version under `npmRegistry`: by default the registry nixpkgs itself fetches
# pnpm from; override with `hermes-kit.override { npmRegistry = "https://registry.example/"; }`.
#
# Native addons (`nativeAddons` below; better-sqlite3, the session store of `hermes serve`) are
# compiled from source by node-gyp before the build, with no network: prebuild-install is told not
# to download (npm_config_build_from_source), node-gyp gets Python and the headers of the very Node
# the package runs on, and the install check loads each addon with that Node.
#
# Python plugins (plugin.yaml + __init__.py) run through the bridge shipped in python/
# (hermes_kit_bridge). The wrapped `hermes` defaults HERMES_PYTHON to `python3` (the `python`
# passthru); the modules' `extraPythonPackages` replace it with `python.withPackages (…)`.
{ lib
, buildNpmPackage
, importNpmLock
, nodejs_20 ? null
, nodejs
, python3
, srcOnly
, pnpm ? null
, npmRegistry ? null
}:
let
  packageJSON = lib.importJSON ../package.json;
  lock = lib.importJSON ../package-lock.json;

  registryFromNixpkgs =
    let
      src = if pnpm == null then { } else pnpm.src or { };
      url = lib.head (src.urls or [ (src.url or "") ]);
      m = builtins.match "(https://[^/]+/)pnpm/-/pnpm-[^/]*[.]tgz" url;
    in if m == null then null else lib.head m;

  registry =
    if npmRegistry != null then lib.removeSuffix "/" npmRegistry + "/"
    else if registryFromNixpkgs != null then registryFromNixpkgs
    else throw "hermes-kit: package-lock.json has packages without `resolved` URLs and no npm registry is known; build with `hermes-kit.override { npmRegistry = \"https://…/\"; }`, or regenerate the lock with `npm install --package-lock-only --no-omit-lockfile-registry-resolved`";

  # "node_modules/a/node_modules/@s/b" → "@s/b" (an alias entry names its real package in `name`).
  packageName = path: m: m.name or (lib.last (lib.splitString "node_modules/" path));

  withUrl = path: m:
    if path == "" || m ? resolved || (m.link or false) || (m.inBundle or false) || !(m ? version) || !(m ? integrity) then m
    else
      let name = packageName path m;
      in m // { resolved = "${registry}${name}/-/${lib.last (lib.splitString "/" name)}-${m.version}.tgz"; };

  packageLock = lock // { packages = lib.mapAttrs withUrl lock.packages; };

  src = lib.fileset.toSource {
    root = ../.;
    fileset = import ./source.nix { inherit lib; };
  };

  # Node 20 is end-of-life: newer nixpkgs drop nodejs_20, so fall back to the default nodejs.
  node = if nodejs_20 != null then nodejs_20 else nodejs;

  # The npm packages whose install script builds a native addon (node-gyp), each with a Node
  # expression that loads the addon (a plain require may load only its JavaScript). No other
  # install script runs; test/nix/package.test.ts keeps this list equal to the packages that
  # package-lock.json marks `hasInstallScript`.
  nativeAddons = {
    better-sqlite3 = "const D = require('better-sqlite3'); if (new D(':memory:').prepare('select 1 as x').get().x !== 1) process.exit(1)";
  };

  # Python code run with PYTHONPATH=<package>/python: the bridge imports and the interpreter is new enough.
  bridgeCheck = "import sys, hermes_kit_bridge, hermes_kit_bridge.host; sys.exit(sys.version_info < hermes_kit_bridge.MIN_PYTHON)";
in
buildNpmPackage {
  pname = "hermes-kit";
  inherit (packageJSON) version;
  inherit src;
  nodejs = node;

  npmDeps = importNpmLock {
    package = packageJSON;
    inherit packageLock;
  };
  npmConfigHook = importNpmLock.npmConfigHook;

  # node-gyp (better-sqlite3's `prebuild-install || node-gyp rebuild --release`) needs Python and a
  # C++ compiler (stdenv's). Current buildNpmPackage adds `nodejs.python` (and cctools on macOS)
  # itself; stated here so that the build does not depend on it.
  nativeBuildInputs = [ (node.passthru.python or python3) ];
  # prebuild-install would download a prebuilt binary: there is no network, and the binary must
  # match `node`'s ABI anyway.
  npm_config_build_from_source = "true";
  # The hook's `npm rebuild` would compile the addons against the headers of the Node importNpmLock
  # was built with (nixpkgs' default `nodejs`), which need not be `node` (another major is another
  # ABI): it only links, and preBuild compiles the addons against `node`.
  npmRebuildFlags = [ "--ignore-scripts" ];
  preBuild = ''
    export npm_config_nodedir=${srcOnly node}
    export npm_config_node_gyp=${node}/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
    npm rebuild ${lib.escapeShellArgs (lib.attrNames nativeAddons)}
  '';

  # `npm run build`: tsc, then scripts/postbuild.mjs. The `prepare` script is not run again by pack.
  npmBuildScript = "build";
  npmPackFlags = [ "--ignore-scripts" ];

  # --set-default: an interpreter set by the modules (the service's environment, the CLI wrapper
  # with extraPythonPackages) or by the user wins over the bare one.
  postInstall = ''
    wrapProgram $out/bin/hermes --set-default HERMES_PYTHON ${python3}/bin/python3
  '';

  doInstallCheck = true;
  installCheckPhase = ''
    runHook preInstallCheck
    $out/bin/hermes --version
    # The bundled plugins and the schemas ship with the package (the original once lost its
    # bundled manifests in packaging): count them.
    test "$(find $out/lib/node_modules/hermes-kit/plugins -name plugin.yaml | wc -l)" -ge 1
    test -f $out/lib/node_modules/hermes-kit/schemas/deploy-spec.schema.json
    # The bundled index: `plugins search` works offline.
    HOME=$TMPDIR $out/bin/hermes --home "$TMPDIR/home" plugins search >/dev/null
    HOME=$TMPDIR $out/bin/hermes --home "$TMPDIR/home" plugins list >/dev/null
    # The service the modules run.
    $out/bin/hermes serve --help >/dev/null
    # The Python plugin bridge ships with the package and imports under the interpreter `hermes` defaults to.
    test -f $out/lib/node_modules/hermes-kit/python/hermes_kit_bridge/__main__.py
    PYTHONPATH=$out/lib/node_modules/hermes-kit/python ${python3}/bin/python3 -c ${lib.escapeShellArg bridgeCheck} \
      || { echo "hermes-kit: the Python bridge does not import with ${python3}/bin/python3" >&2; exit 1; }
    # Each native addon loads in the installed package, with the Node `hermes` runs on.
    ${lib.concatStrings (lib.mapAttrsToList (name: check: ''
      (cd $out/lib/node_modules/hermes-kit && ${node}/bin/node -e ${lib.escapeShellArg check}) \
        || { echo "hermes-kit: the native addon ${name} does not load" >&2; exit 1; }
    '') nativeAddons)}
    runHook postInstallCheck
  '';

  passthru = {
    hermesLib = import ./lib.nix;
    inherit nativeAddons bridgeCheck;
    # The interpreter of Python plugins: the modules build `python.withPackages` from it.
    python = python3;
  };

  meta = {
    description = "Declarative, Nix-friendly deployment toolkit and runtime for Hermes agent plugins";
    license = lib.licenses.mit;
    mainProgram = "hermes";
    platforms = lib.platforms.unix;
  };
}
