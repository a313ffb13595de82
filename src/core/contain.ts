import { isAbsolute, relative, sep } from "node:path";

/**
 * The one path-containment check: whether a path stays inside a folder. Every walk, link check,
 * subdirectory and `main:` check asks here.
 */

/** Whether the absolute path `p` is `root` itself or under it (both resolved the same way: both real, or both not). */
export function isInside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (!r.startsWith(`..${sep}`) && r !== ".." && !isAbsolute(r));
}

/** A relative path that cannot leave the folder it is joined to: not empty, not absolute, no drive or UNC prefix, no
 * `..` segment. */
export function isContainedRelativePath(p: string): boolean {
  if (!p || p.startsWith("/") || p.startsWith("\\") || /^[A-Za-z]:/.test(p)) return false;
  return !p.split(/[\\/]+/).some((seg) => seg === "..");
}
