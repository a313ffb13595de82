import { Argument, Command } from "../commander.js";

interface Node {
  /** Subcommand names from the root, space-separated ("" for the root). */
  path: string;
  subs: string[];
  /** Long and short flags of this command, the root's global ones included. */
  flags: Array<{ long?: string; short?: string; description: string }>;
}

/** Every command of the program, read from commander itself so completion never drifts from the CLI. */
function walk(cmd: Command, globals: Node["flags"], path: string[] = []): Node[] {
  const visible = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  const own = cmd.options
    .filter((o) => !o.hidden)
    .map((o) => ({ long: o.long, short: o.short, description: o.description }));
  const node: Node = {
    path: path.join(" "),
    subs: visible.flatMap((c) => [c.name(), ...c.aliases()]),
    flags: path.length ? [...own, ...globals] : own,
  };
  return [node, ...visible.flatMap((c) => walk(c, globals, [...path, c.name()]))];
}

const words = (n: Node) => n.flags.flatMap((f) => [f.long, f.short]).filter((x): x is string => Boolean(x));
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(nodes: Node[]): string {
  const subs = nodes.filter((n) => n.subs.length).map((n) => `    ${q(n.path)}) echo ${q(n.subs.join(" "))} ;;`);
  const flags = nodes.map((n) => `    ${q(n.path)}) echo ${q([...words(n), "--help"].join(" "))} ;;`);
  return `# hermes completion for bash: eval "$(hermes completion bash)" (e.g. in ~/.bashrc)
_hermes_subs() {
  case "$1" in
${subs.join("\n")}
  esac
}
_hermes_flags() {
  case "$1" in
${flags.join("\n")}
  esac
}
_hermes() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case " $(_hermes_subs "$path") " in *" $w "*) path="\${path:+$path }$w" ;; esac
  done
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_hermes_flags "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_hermes_subs "$path")" -- "$cur"))
  fi
}
complete -o default -F _hermes hermes
`;
}

function zsh(nodes: Node[]): string {
  // zsh runs the bash function through its bash-completion layer: one definition for both shells.
  return `# hermes completion for zsh: eval "$(hermes completion zsh)" (e.g. in ~/.zshrc)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bash(nodes).split("\n").slice(1).join("\n")}`;
}

function fish(nodes: Node[]): string {
  const lines = [
    "# hermes completion for fish: hermes completion fish > ~/.config/fish/completions/hermes.fish",
    "function __hermes_path",
    "    set -l toks (commandline -opc)",
    "    set -e toks[1]",
    "    string join ' ' (string match -v -- '-*' $toks)",
    "end",
    "function __hermes_at",
    "    set -l p (__hermes_path)",
    '    test "$p" = "$argv[1]"',
    "end",
  ];
  for (const n of nodes) {
    const cond = `-n ${q(`__hermes_at "${n.path}"`)}`;
    for (const s of n.subs) lines.push(`complete -c hermes ${cond} -a ${q(s)}`);
    for (const f of n.flags) {
      const parts = [f.long ? `-l ${f.long.replace(/^--/, "")}` : "", f.short ? `-s ${f.short.replace(/^-/, "")}` : ""]
        .filter(Boolean)
        .join(" ");
      lines.push(`complete -c hermes ${cond} ${parts} -d ${q(f.description)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** `hermes completion bash|zsh|fish`: a completion script for the whole command tree (`loadAll` declares it). */
export function completionCommand(program: Command, loadAll: () => Promise<void>): Command {
  return new Command("completion")
    .description("print a shell completion script (bash, zsh or fish)")
    .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh", "fish"]))
    .action(async (shell: "bash" | "zsh" | "fish") => {
      await loadAll();
      const root = program.options
        .filter((o) => !o.hidden && o.long !== "--version")
        .map((o) => ({ long: o.long, short: o.short, description: o.description }));
      const nodes = walk(program, root);
      process.stdout.write(shell === "bash" ? bash(nodes) : shell === "zsh" ? zsh(nodes) : fish(nodes));
    });
}
