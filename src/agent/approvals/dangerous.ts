/**
 * Command policy of the terminal tool. Hardline commands never run, whatever anyone approves;
 * they are refused before any approval transport or prompt is asked. Dangerous commands run only
 * after a person approves them (once, for the session, or always).
 */

export interface CommandPattern {
  key: string;
  description: string;
  re: RegExp;
}

/** Unconditional refusals: wiping the root or home, formatting or overwriting disks, fork bombs. */
export const HARDLINE_PATTERNS: readonly CommandPattern[] = [
  {
    key: "rm_root",
    description: "recursive delete of / (or /*, ~, $HOME)",
    re: /\brm\s+(?=(?:[^;&|]*\s)?-(?:[A-Za-z]*[rR]|-recursive))(?:[^;&|]*\s)?(?:\/|\/\*|~\/?|\$HOME\/?)(?=\s|;|&|\||$)/,
  },
  { key: "rm_no_preserve_root", description: "rm --no-preserve-root", re: /\brm\b[^;&|]*--no-preserve-root/ },
  {
    key: "mkfs_device",
    description: "format a disk device (mkfs on /dev/…)",
    re: /\bmkfs(?:\.\w+)?\b[^;&|]*\/dev\/(?!null\b)/,
  },
  {
    key: "dd_device",
    description: "dd onto a disk device",
    re: /\bdd\b[^;&|]*\bof=\/dev\/(?:sd|hd|vd|xvd|nvme|disk|mmcblk)\w*/,
  },
  {
    key: "redirect_device",
    description: "overwrite a disk device with a redirect",
    re: />\s*\/dev\/(?:sd|hd|vd|xvd|nvme|disk|mmcblk)\w*/,
  },
  { key: "fork_bomb", description: "fork bomb", re: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
];

/** Need a person's approval. */
export const DANGEROUS_PATTERNS: readonly CommandPattern[] = [
  { key: "rm_recursive", description: "recursive delete", re: /\brm\s+(?:-[A-Za-z-]+\s+)*-[A-Za-z]*[rR][A-Za-z]*\b/ },
  { key: "rm_recursive_long", description: "recursive delete", re: /\brm\b[^;&|]*--recursive\b/ },
  { key: "mkfs", description: "create a file system (mkfs)", re: /\bmkfs(?:\.\w+)?\b/ },
  { key: "dd_write_device", description: "dd writing to a device", re: /\bdd\b[^;&|]*\bof=\/dev\/(?!null\b)/ },
  {
    key: "shutdown",
    description: "shut down or reboot the machine",
    re: /(?:^|[;&|]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff|init\s+[06])\b/,
  },
  {
    key: "pipe_to_shell",
    description: "download and run a script (curl|sh)",
    re: /\b(?:curl|wget)\b[^;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b/,
  },
  {
    key: "chmod_777_recursive",
    description: "recursive chmod 777",
    re: /\bchmod\s+(?:-[A-Za-z]*R[A-Za-z]*\s+777|777\s+-[A-Za-z]*R)/,
  },
  {
    key: "chown_recursive_root",
    description: "recursive chown of a system path",
    re: /\bchown\s+-[A-Za-z]*R[A-Za-z]*\s+\S+\s+\/(?:\s|$|etc|usr|var|bin|lib)/,
  },
  { key: "kill_all", description: "kill every process", re: /\bkill\s+-9\s+-1\b|\bkillall\b|\bpkill\s+-9\b/ },
  { key: "git_force_push", description: "git push --force", re: /\bgit\s+push\b[^;&|]*(?:--force\b|-f\b)/ },
  { key: "git_reset_hard", description: "git reset --hard", re: /\bgit\s+reset\s+--hard\b/ },
  { key: "git_clean", description: "git clean -f (deletes untracked files)", re: /\bgit\s+clean\s+-[A-Za-z]*f/ },
  {
    key: "sql_drop",
    description: "SQL DROP / TRUNCATE",
    re: /\b(?:DROP\s+(?:TABLE|DATABASE|SCHEMA)|TRUNCATE\s+TABLE)\b/i,
  },
  { key: "write_etc", description: "overwrite a file in /etc", re: />\s*\/etc\// },
  { key: "sudo", description: "run as root (sudo)", re: /(?:^|[;&|]\s*)sudo\b/ },
];

export interface CommandVerdict {
  hardline?: CommandPattern;
  dangerous: CommandPattern[];
}

/** Classify a shell command; keys are stable so "always" approvals can name them. */
export function checkCommand(command: string): CommandVerdict {
  const hardline = HARDLINE_PATTERNS.find((p) => p.re.test(command));
  const seen = new Set<string>();
  const dangerous: CommandPattern[] = [];
  for (const p of DANGEROUS_PATTERNS) {
    if (p.re.test(command) && !seen.has(p.description)) {
      seen.add(p.description);
      dangerous.push(p);
    }
  }
  return { ...(hardline ? { hardline } : {}), dangerous };
}

/** Sensitive write targets of write_file that need approval. */
export function checkWritePath(path: string): CommandPattern | undefined {
  if (/^\/etc\//.test(path)) return { key: "write_etc", description: "overwrite a file in /etc", re: /./ };
  if (/(?:^|\/)\.ssh\//.test(path)) return { key: "write_ssh", description: "write into ~/.ssh", re: /./ };
  if (/(?:^|\/)\.(?:bashrc|zshrc|profile|bash_profile)$/.test(path))
    return { key: "write_shell_rc", description: "change a shell start-up file", re: /./ };
  return undefined;
}
