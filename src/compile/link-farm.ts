import { dirname, relative } from "node:path";

/** Name of a link's entry in a generation's link farm. */
export function farmName(link: string): string {
  return encodeURIComponent(link);
}

/** What a deployment link in the home holds: a relative path through `generations/current`. */
export function linkValue(link: string): string {
  return relative(dirname(`/h/${link}`), `/h/generations/current/links/${farmName(link)}`);
}
