# hermes-kit's pure Nix library: builtins only, no nixpkgs, so it evaluates anywhere
# (`nix-instantiate --eval --strict --json`), and CI tests it with real Nix.
#
#   mkDeploySpec { plugins, npmPackages ? [], settings ? {}, listPolicy ? "union", home ? null, eventHooks ? [] }
#     → an attrset that is the deploy spec `hermes compile --spec` reads
#       (schemas/deploy-spec.schema.json is the contract; a test checks the output against it).
#
# A plugin entry is one of
#   - a path (./my-plugin), a derivation, or a string naming a folder (a store path);
#   - an attrset { package, enable ? true, grants ? [], settings ? {}, required ? false, key ? null }
#     where `package` is one of the above and `key` (alias `name`) states the plugin key when it
#     cannot be read at evaluation time (see pluginKey).
let
  inherit (builtins)
    attrNames concatMap elem filter foldl' head isAttrs isBool isList isPath
    isString length match readFile pathExists split substring toJSON typeOf;

  # The capability ids a grant may name (schemas/plugin-manifest.schema.json#/$defs/capabilityId;
  # a test keeps the two equal).
  capabilities = [
    "tools.override"
    "llm.provider_override"
    "llm.model_override"
    "llm.agent_id_override"
    "llm.profile_override"
    "llm.task_override"
    "gateway.platform_actions"
    "gateway.plugin_status"
  ];

  listPolicies = [ "union" "replace" ];

  entryFields = [ "package" "enable" "grants" "settings" "required" "key" "name" ];

  isDerivation = v: isAttrs v && (v.type or null) == "derivation";

  # A bare value that names a plugin folder (not an entry attrset).
  isPluginValue = v: isPath v || isString v || isDerivation v || (isAttrs v && v ? outPath && !(v ? package));

  describe = v:
    if isPath v then toString v
    else if isString v then v
    else if isDerivation v then "${v.name or "derivation"} (${builtins.unsafeDiscardStringContext (toString v.outPath)})"
    else typeOf v;

  fail = where: msg: throw "hermes-kit: ${where}: ${msg}";

  # Items that occur more than once, each listed once, in first-seen order.
  duplicatesOf = xs:
    let step = acc: x: if length (filter (y: y == x) xs) > 1 && !(elem x acc) then acc ++ [ x ] else acc;
    in foldl' step [ ] xs;

  # Levenshtein-free "did you mean": the first known field sharing the first three letters.
  suggest = known: bad:
    let hits = filter (k: substring 0 3 k == substring 0 3 bad) known;
    in if hits == [ ] then "" else " (did you mean '${head hits}'?)";

  # The folder a plugin value names, as a string. Paths and derivations are interpolated, so a
  # path is copied into the store and the string carries the store path's context.
  folderOf = where: v:
    if isPath v then "${v}"
    else if isString v then
      (if v == "" then fail where "the plugin path is empty"
       else if substring 0 1 v != "/" then fail where "'${v}' is not an absolute path (use a path literal such as ./my-plugin, or a derivation)"
       else v)
    else if isAttrs v && v ? outPath then "${v}"
    else fail where "expected a path, a derivation or an attrset with `package`, got ${typeOf v}";

  # Normalise one entry to { package, enable, grants, settings, required, key }.
  normalizeEntry = where: e:
    if isPluginValue e then {
      package = e;
      enable = true;
      grants = [ ];
      settings = { };
      required = false;
      key = null;
    }
    else if isAttrs e then
      let
        unknown = filter (k: !(elem k entryFields)) (attrNames e);
        check = name: pred: what: v: if pred v then v else fail where "`${name}` must be ${what}, got ${typeOf v}";
        key = e.key or e.name or null;
      in
      if unknown != [ ] then fail where "unknown attribute '${head unknown}'${suggest entryFields (head unknown)}; an entry takes ${toString entryFields}"
      else if !(e ? package) then fail where "an entry attrset needs `package` (a path or a derivation)"
      else {
        package = e.package;
        enable = check "enable" isBool "a boolean" (e.enable or true);
        grants =
          let
            gs = check "grants" isList "a list of capability ids" (e.grants or [ ]);
            dup = duplicatesOf gs;
          in
          if dup != [ ] then fail where "capability '${head dup}' is granted more than once; list each capability once"
          else map (g:
            if !(isString g) then fail where "grants must be strings, got ${typeOf g}"
            else if !(elem g capabilities) then fail where "unknown capability '${g}'${suggest capabilities g}; known: ${toString capabilities}"
            else g) gs;
        settings = check "settings" isAttrs "an attrset" (e.settings or { });
        required = check "required" isBool "a boolean" (e.required or false);
        key = if key == null || isString key then key else fail where "`key` must be a string, got ${typeOf key}";
      }
    else fail where "expected a path, a derivation or an attrset, got ${typeOf e}";

  # Spec entry (schema #/$defs/plugin): only the fields the schema knows.
  specEntry = where: e:
    let
      n = normalizeEntry where e;
      mismatch = keyMismatch e;
    in
    if mismatch != null then fail where mismatch
    else {
      path = folderOf where n.package;
      inherit (n) enable grants settings required;
    }
    # `hermes compile` refuses the spec when the manifest's key differs from a stated one.
    // (if n.key == null then { } else { inherit (n) key; });

  # --- plugin keys at evaluation time -------------------------------------------------------

  # The manifest's top-level `name:` (a minimal YAML read: an unindented `name:` line with a plain
  # or quoted scalar); null when there is none.
  manifestName = text:
    let
      lines = filter isString (split "\r?\n" text);
      hits = concatMap (l:
        let m = match "name:[ \t]*(\"([^\"]*)\"|'([^']*)'|([^ \t#\"'][^#]*[^ \t#]|[^ \t#\"']))?[ \t]*(#.*)?" l;
        in if m == null then [ ] else [ m ]) lines;
      pick = m:
        let dq = builtins.elemAt m 1; sq = builtins.elemAt m 2; plain = builtins.elemAt m 3;
        in if dq != null then dq else if sq != null then sq else plain;
    in if hits == [ ] then null else pick (head hits);

  baseName = p: let parts = filter isString (split "/" p); in builtins.elemAt parts (length parts - 1);

  # The key `hermes compile` will give a plugin folder, when it can be known without building
  # anything: an explicit `key`, else the manifest `name:` of a path value (read in place, with
  # no store copy, which pure evaluation allows). Derivations and strings give null: reading them
  # would be import-from-derivation or impure. A manifest without `name:` also gives null (compile
  # then falls back to the store folder's name). `hermes compile` refuses duplicates in any case.
  pluginKey = e:
    let n = normalizeEntry (entryWhere e) e;
    in if n.key != null then n.key else manifestKey n.package;

  # The manifest `name:` of a path value; null for anything that cannot be read at evaluation time.
  manifestKey = p:
    let
      manifest =
        if !(isPath p) then null
        else if pathExists (p + "/plugin.yaml") then p + "/plugin.yaml"
        else if pathExists (p + "/plugin.yml") then p + "/plugin.yml"
        else null;
    in if manifest == null then null else manifestName (readFile manifest);

  # A stated `key` that the (readable) manifest contradicts: the message, else null.
  keyMismatch = e:
    let
      n = normalizeEntry (entryWhere e) e;
      m = if n.key == null then null else manifestKey n.package;
    in
    if m == null || m == n.key then null
    else "the entry states key '${n.key}' but the manifest of ${describe n.package} names '${m}'";

  entryWhere = e: "plugin entry ${describe (if isAttrs e && e ? package then e.package else e)}";

  pluginKeys = entries: filter (k: k != null) (map pluginKey entries);

  # Keys claimed more than once, each listed once, in first-seen order.
  duplicateKeys = entries:
    duplicatesOf (pluginKeys entries);

  # "alpha (claimed by /a and /b)" for each duplicate key: what an assertion message shows.
  describeDuplicates = entries:
    let
      claims = filter (c: c.key != null) (map (e: { key = pluginKey e; what = describe (if isAttrs e && e ? package then e.package else e); }) entries);
      one = k: "${k} (claimed by ${builtins.concatStringsSep " and " (map (c: c.what) (filter (c: c.key == k) claims))})";
    in map one (duplicateKeys entries);

  # --- the spec ------------------------------------------------------------------------------

  mkDeploySpec =
    { plugins ? [ ]
    , npmPackages ? [ ]
    , settings ? { }
    , listPolicy ? "union"
    , home ? null
    , eventHooks ? [ ]
    }:
    let
      dups = duplicateKeys (plugins ++ npmPackages);
      indexed = what: xs:
        builtins.genList (i: let e = builtins.elemAt xs i; in specEntry "${what}[${toString i}] (${describe (if isAttrs e && e ? package then e.package else e)})" e) (length xs);
    in
    if !(isList plugins) then fail "mkDeploySpec" "`plugins` must be a list, got ${typeOf plugins}"
    else if !(isList npmPackages) then fail "mkDeploySpec" "`npmPackages` must be a list, got ${typeOf npmPackages}"
    else if !(isAttrs settings) then fail "mkDeploySpec" "`settings` must be an attrset, got ${typeOf settings}"
    else if !(elem listPolicy listPolicies) then fail "mkDeploySpec" "`listPolicy` must be one of ${toString listPolicies}, got ${toJSON listPolicy}"
    else if home != null && !(isString home || isPath home) then fail "mkDeploySpec" "`home` must be a string, got ${typeOf home}"
    else if !(isList eventHooks) then fail "mkDeploySpec" "`eventHooks` must be a list of folders, got ${typeOf eventHooks}"
    else if dups != [ ] then fail "mkDeploySpec" "duplicate plugin keys: ${builtins.concatStringsSep "; " (describeDuplicates (plugins ++ npmPackages))}. Each key may be declared once; an explicit `key` only states a key that cannot be read at evaluation time"
    else
      {
        version = 1;
        plugins = indexed "plugins" plugins;
        npmPackages = indexed "npmPackages" npmPackages;
        inherit settings listPolicy;
      }
      // (if home == null then { } else { home = toString home; })
      # Absent when empty, so specs without event hooks render as before.
      // (if eventHooks == [ ] then { } else { eventHooks = map (d: "${d}") eventHooks; });

  # The spec as JSON text (what the modules write into the store).
  toDeploySpecJSON = args: toJSON (mkDeploySpec args);
in
{
  inherit capabilities listPolicies mkDeploySpec toDeploySpecJSON normalizeEntry pluginKey pluginKeys duplicateKeys describeDuplicates manifestName keyMismatch duplicatesOf;
}
