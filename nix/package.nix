# hermes-kit, built from package.json and package-lock.json with nixpkgs' importNpmLock: every
# tarball is fetched by the integrity hash the lock already records, so there is no hand-kept
# npmDepsHash to update when dependencies change.
#
# The lock may omit `resolved` URLs for the default registry (npm's `omit-lockfile-registry-resolved`,
# set on this project's machines). importNpmLock needs a URL per package, so the missing ones are
# rebuilt from name and version under `npmRegistry`: by default the registry nixpkgs itself fetches
# pnpm from; override with `hermes-kit.override { npmRegistry = "https://registry.example/"; }`.
{ lib
, buildNpmPackage
, importNpmLock
, nodejs_20 ? null
, nodejs
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

  # `npm run build`: tsc, then scripts/postbuild.mjs. The `prepare` script is not run again by pack.
  npmBuildScript = "build";
  npmPackFlags = [ "--ignore-scripts" ];

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
    runHook postInstallCheck
  '';

  passthru.hermesLib = import ./lib.nix;

  meta = {
    description = "Declarative, Nix-friendly deployment toolkit and runtime for Hermes agent plugins";
    license = lib.licenses.mit;
    mainProgram = "hermes";
    platforms = lib.platforms.unix;
  };
}
