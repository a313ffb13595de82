# `lib.hm.dag` as home-manager extends nixpkgs' lib: entries are { data, after, before }.
lib: lib.extend (_: _: {
  hm.dag = rec {
    entryBetween = before: after: data: { inherit data before after; };
    entryAfter = entryBetween [ ];
    entryBefore = before: entryBetween before [ ];
    entryAnywhere = entryBetween [ ] [ ];
  };
})
