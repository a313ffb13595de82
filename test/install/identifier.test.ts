import { describe, expect, it } from "vitest";
import type { HermesError } from "../../src/core/errors.js";
import {
  parseIdentifier,
  parseRef,
  redactSecrets,
  repoNameOf,
  scrubUrl,
  urlCredentials,
} from "../../src/install/identifier.js";
import { validatePluginName } from "../../src/install/install.js";
import { parseMetadata, renderMetadata } from "../../src/install/metadata.js";
import { resolveIndexName } from "../../src/install/index/load.js";
import { indexEntry } from "./helpers.js";

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as HermesError).code;
  }
  return undefined;
}

describe("install identifiers", () => {
  it.each([
    ["hermes-media-studio", { kind: "index", name: "hermes-media-studio" }],
    ["owner/repo", { kind: "git", url: "https://github.com/owner/repo.git" }],
    ["owner/repo.git", { kind: "git", url: "https://github.com/owner/repo.git" }],
    ["owner/repo/plugins/x", { kind: "git", url: "https://github.com/owner/repo.git", subdir: "plugins/x" }],
    ["owner//repo//sub/", { kind: "git", url: "https://github.com/owner/repo.git", subdir: "sub" }],
    ["https://gitlab.com/a/b.git", { kind: "git", url: "https://gitlab.com/a/b.git" }],
    ["https://gitlab.com/a/b.git#/plugins/x/", { kind: "git", url: "https://gitlab.com/a/b.git", subdir: "plugins/x" }],
    ["https://gitlab.com/a/b.git/plugins/x", { kind: "git", url: "https://gitlab.com/a/b.git", subdir: "plugins/x" }],
    ["git@github.com:a/b.git#sub", { kind: "git", url: "git@github.com:a/b.git", subdir: "sub" }],
    ["ssh://git@host:2222/a/b.git", { kind: "git", url: "ssh://git@host:2222/a/b.git" }],
    ["file:///srv/repos/b.git#p", { kind: "git", url: "file:///srv/repos/b.git", subdir: "p" }],
    ["git://127.0.0.1:9418/x.git", { kind: "git", url: "git://127.0.0.1:9418/x.git" }],
    [
      "https://github.com/a/b/tree/feature/x/plugins/p",
      { kind: "git", url: "https://github.com/a/b.git", treePath: ["feature", "x", "plugins", "p"] },
    ],
    ["https://github.com/a/b/tree/main", { kind: "git", url: "https://github.com/a/b.git", treePath: ["main"] }],
    ["https://github.com/a/b/blob/main/README.md", { kind: "git", url: "https://github.com/a/b.git" }],
    ["https://github.com/a/b", { kind: "git", url: "https://github.com/a/b" }],
  ])("%s", (id, want) => {
    expect(parseIdentifier(id)).toEqual(want);
  });

  it.each(["", "  ", "-upload-pack=x", "--help", "owner", "owner\\repo", "own er/repo", "../x/y"])(
    "refuses %j",
    (id) => {
      const c = code(() => parseIdentifier(id));
      // A lone word is an index name, never an error here.
      if (id === "owner") expect(c).toBeUndefined();
      else expect(c).toBe("E_INSTALL_IDENTIFIER");
    },
  );
});

describe("--ref", () => {
  it("accepts a full SHA in any case and lowercases it", () => {
    expect(parseRef("ABCDEF0123456789ABCDEF0123456789ABCDEF01")).toBe("abcdef0123456789abcdef0123456789abcdef01");
  });
  it.each([
    ["abcdef0", /short SHA/],
    ["abcdef0123456789abcdef0123456789abcdef0", /short SHA \(39/],
    ["v1.2.3", /tag/],
    ["main", /branch or tag/],
    ["abcdef0123456789abcdef0123456789abcdef012", /not a commit SHA|branch or tag/],
  ])("refuses %s with a clear message", (ref, why) => {
    try {
      parseRef(ref);
      expect.unreachable();
    } catch (e) {
      expect((e as HermesError).code).toBe("E_INSTALL_REF_NOT_SHA");
      expect((e as HermesError).message).toMatch(why);
      expect((e as HermesError).message).toContain("full 40-character commit SHA");
      expect((e as HermesError).exitCode).toBe(2);
    }
  });
});

describe("credentials never leave the clone call", () => {
  it.each([
    ["https://user:tok3n@github.com/a/b.git", "https://github.com/a/b.git"],
    ["https://tok3n@github.com/a/b.git?x=1#frag", "https://github.com/a/b.git"],
    ["http://u:p@[::1]:8080/a.git", "http://[::1]:8080/a.git"],
    ["ssh://git:secret@host/a.git", "ssh://git@host/a.git"],
    ["git@github.com:a/b.git", "git@github.com:a/b.git"],
    ["file:///x/y.git", "file:///x/y.git"],
  ])("scrubUrl(%s)", (raw, clean) => {
    expect(scrubUrl(raw)).toBe(clean);
  });

  it("reads percent-encoded credentials", () => {
    expect(urlCredentials("https://us%40er:p%3Ass@h/x")).toEqual({ username: "us@er", password: "p:ss" });
    expect(urlCredentials("https://h/x")).toBeUndefined();
  });

  it("redacts URLs, userinfo and token shapes in any text", () => {
    const raw = "https://bob:s3cr3t-token@example.com/r.git";
    const text =
      `fatal: unable to access '${raw}/': 403; also https://x:y@other.host/z and ghp_abcdefghijklmnop1234 and ` +
      "?access_token=zzz";
    const red = redactSecrets(text, [raw]);
    expect(red).not.toContain("s3cr3t-token");
    expect(red).not.toContain("bob:");
    expect(red).not.toContain("x:y@");
    expect(red).not.toContain("abcdefghijklmnop1234");
    expect(red).not.toContain("zzz");
    expect(red).toContain("https://example.com/r.git");
  });

  it("repoNameOf", () => {
    expect(repoNameOf("https://github.com/a/my-plugin.git")).toBe("my-plugin");
    expect(repoNameOf("git@github.com:a/b.git")).toBe("b");
    expect(repoNameOf("file:///srv/x/")).toBe("x");
  });
});

describe("plugin names", () => {
  it.each(["a/b", "..", ".", "a..b", "a\\b", "", ".hidden", "__init__", "nix-managed-x", "bad\u0001"])(
    "refuses %j",
    (n) => {
      expect(code(() => validatePluginName(n))).toBe("E_INSTALL_NAME_INVALID");
    },
  );
  it.each(["my-plugin", "My Plugin", "x.y", "a_b"])("accepts %j", (n) => {
    expect(code(() => validatePluginName(n))).toBeUndefined();
  });
});

describe(".install-metadata.json", () => {
  const sha = "0123456789abcdef0123456789abcdef01234567";
  it("renders sorted keys, exactly three fields, 2-space indent and a trailing newline", () => {
    const text = renderMetadata({
      zeta: { source: "https://github.com/a/z.git", revision: sha, pinned: true } as never,
      alpha: { revision: sha, pinned: false, source: "https://github.com/a/b.git#sub", extra: "x" } as never,
    });
    expect(text).toBe(
      `{\n  "alpha": {\n    "pinned": false,\n    "revision": "${sha}",\n    "source": ` +
        `"https://github.com/a/b.git#sub"\n  },\n  "zeta": {\n    "pinned": true,\n    "revision": ` +
        `"${sha}",\n    "source": "https://github.com/a/z.git"\n  }\n}\n`,
    );
  });

  it("reads missing/empty as {}, tolerates a BOM, refuses junk with a position", () => {
    expect(parseMetadata(undefined, "m")).toEqual({});
    expect(parseMetadata("  \n", "m")).toEqual({});
    expect(
      parseMetadata(`\uFEFF{"a":{"pinned":false,"revision":"${sha.toUpperCase()}","source":"s"}}`, "m").a!.revision,
    ).toBe(sha);
    for (const bad of ["{", "[]", '{"a": 1}', '{"a":{"source":"s","revision":"abc"}}', '"x"']) {
      try {
        parseMetadata(bad, "meta.json");
        expect.unreachable();
      } catch (e) {
        expect((e as HermesError).code).toBe("E_INSTALL_METADATA_CORRUPT");
      }
    }
    try {
      parseMetadata('{\n  "a": {,\n}', "meta.json");
    } catch (e) {
      expect((e as HermesError).line).toBe(2);
    }
  });
});

describe("index names resolve exactly", () => {
  const e = (name: string) => indexEntry(name);
  const entries = [e("hermes-telegram-business"), e("Media-Studio"), e("dup"), e("DUP")];
  it("exact, case-insensitive", () => {
    expect(resolveIndexName(entries, "media-studio")).toMatchObject({ kind: "found", entry: { name: "Media-Studio" } });
  });
  it("a unique substring is a suggestion, not an install", () => {
    const r = resolveIndexName(entries, "telegram");
    expect(r.kind).toBe("unknown");
    expect(r.kind === "unknown" && r.closest.map((c) => c.name)).toEqual(["hermes-telegram-business"]);
  });
  it("typos are suggested", () => {
    const r = resolveIndexName(entries, "media-studoi");
    expect(r.kind === "unknown" && r.closest[0]!.name).toBe("Media-Studio");
  });
  it("two exact matches are ambiguous", () => {
    expect(resolveIndexName(entries, "Dup").kind).toBe("ambiguous");
  });
});
