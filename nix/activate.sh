#!/usr/bin/env bash
# hermes-kit activation: apply one rendered deploy spec to each Hermes home with
# `hermes compile --spec SPEC --managed KIND`, keep the store paths of every generation alive with
# indirect GC roots, and release homes that an earlier activation managed and this one does not.
#
# The NixOS and home-manager modules run this script (nix/module.nix); CI runs it against real Nix
# (test/nix/nix.test.ts). It needs bash, coreutils and, for GC roots, nix-store on PATH.
#
#   activate.sh [options] --home NAME HOME SPEC [--home NAME HOME SPEC ...]
#
#   --hermes BIN        the hermes CLI (default: hermes on PATH)
#   --kind KIND         value of --managed: nixos, home-manager, ... (required)
#   --state FILE        list of the homes this deployment manages; a home listed there by an earlier
#                       activation and not declared now gets RELEASE_SPEC (default: none kept)
#   --release-spec FILE spec applied to released homes (default: an empty spec written to a temp file)
#   --run-as USER:GROUP run hermes (and nix-store) as this user; only as root, through setpriv
#   --dry-run           print each home's plan (hermes compile --dry-run); write nothing
#   --no-gc-roots       do not register GC roots
#
# With no --home, every home listed in --state is released (what a disabled module runs).
#
# Exit status: 0 when every home compiled and every GC root was registered; 1 when a compile was
# refused (that home keeps the generation it had: hermes compile changes nothing when it refuses),
# a GC root could not be registered (that generation gets no gcroots/.done and is retried), or a
# release failed; 2 on a usage error.
set -uo pipefail

hermes=hermes
kind=""
state=""
release_spec=""
run_as=""
dry_run=0
gc_roots=1
homes=()

die_usage() { echo "hermes-agent activation: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --hermes) [ $# -ge 2 ] || die_usage "--hermes needs a value"; hermes=$2; shift 2 ;;
    --kind) [ $# -ge 2 ] || die_usage "--kind needs a value"; kind=$2; shift 2 ;;
    --state) [ $# -ge 2 ] || die_usage "--state needs a value"; state=$2; shift 2 ;;
    --release-spec) [ $# -ge 2 ] || die_usage "--release-spec needs a value"; release_spec=$2; shift 2 ;;
    --run-as) [ $# -ge 2 ] || die_usage "--run-as needs USER:GROUP"; run_as=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --no-gc-roots) gc_roots=0; shift ;;
    --home)
      [ $# -ge 4 ] || die_usage "--home needs NAME HOME SPEC"
      case "$3" in /*) ;; *) die_usage "home '$3' is not an absolute path" ;; esac
      homes+=("$2" "$3" "$4"); shift 4 ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
  esac
done
[ -n "$kind" ] || die_usage "--kind is required"

as_user=()
if [ -n "$run_as" ]; then
  case "$run_as" in *:*) ;; *) die_usage "--run-as takes USER:GROUP" ;; esac
  if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null 2>&1 || die_usage "--run-as needs setpriv (util-linux) on PATH"
    as_user=(setpriv "--reuid=${run_as%%:*}" "--regid=${run_as##*:}" --init-groups --)
  elif [ "$(id -un)" != "${run_as%%:*}" ]; then
    die_usage "--run-as ${run_as%%:*}: only root can switch users"
  fi
fi

status=0
say() { echo "hermes-agent: $*" >&2; }

# Run as the deployment's user, with an environment that names the home and nothing else of ours.
run_hermes() {
  local home=$1 user_home=${HOME:-$1}; shift
  [ -n "$run_as" ] && user_home=$home
  "${as_user[@]}" env HERMES_HOME="$home" HOME="$user_home" "$hermes" --home "$home" "$@"
}

# The most useful line of a refused compile's stderr: the first error that is not the summary.
first_error() {
  local f=$1 line
  line=$(grep -E '^error ' "$f" | grep -v -m1 'E_COMPILE_REFUSED' || true)
  [ -n "$line" ] || line=$(grep -m1 -E '^error' "$f" || true)
  [ -n "$line" ] || line=$(grep -m1 -v -E '^[[:space:]]*$' "$f" || true)
  printf '%s' "${line:-no error output}"
}

ensure_home() {
  local home=$1
  [ -d "$home" ] && return 0
  [ "$dry_run" = 1 ] && return 0
  if [ ${#as_user[@]} -gt 0 ]; then
    # As the user first (a profile inside the main home); else root makes the leaf for the user.
    "${as_user[@]}" mkdir -p -m 0750 "$home" 2>/dev/null ||
      install -d -m 0750 -o "${run_as%%:*}" -g "${run_as##*:}" "$home"
  else
    mkdir -p -m 0750 "$home"
  fi
}

# Indirect GC roots for every generation of HOME that has none yet: `generations/<n>/gcroots/<link>`
# → the store path a farm link targets, registered with nix-store --add-root. Pruning the generation
# deletes the root with it, and Nix's collector then drops the stale registration.
register_gc_roots() {
  local home=$1 gen l t rest sp name
  [ "$gc_roots" = 1 ] || return 0
  if ! command -v nix-store >/dev/null 2>&1; then
    say "nix-store is not on PATH: the store paths of $home are not GC roots (a garbage collection may remove plugins of older generations)"
    return 0
  fi
  for gen in "$home"/generations/[0-9]*; do
    [ -d "$gen/links" ] || continue
    [ -e "$gen/gcroots/.done" ] && continue
    "${as_user[@]}" mkdir -p "$gen/gcroots" || { say "cannot create $gen/gcroots: the plugins of generation $gen are not GC roots"; status=1; continue; }
    local ok=1 err
    for l in "$gen"/links/*; do
      [ -L "$l" ] || continue
      t=$(readlink "$l")
      case "$t" in /nix/store/*) ;; *) continue ;; esac
      rest=${t#/nix/store/}
      sp=/nix/store/${rest%%/*} # the store path of /nix/store/<hash-name>[/sub/path]
      name=$(basename "$l")
      # A path the collector already removed stays unrooted; never ask a substituter for it.
      "${as_user[@]}" nix-store --check-validity "$sp" >/dev/null 2>&1 || continue
      # An unrooted plugin can be collected under a running agent: a failure fails the activation.
      if ! err=$("${as_user[@]}" nix-store --add-root "$gen/gcroots/$name" --indirect --realise "$sp" 2>&1 >/dev/null); then
        say "GC root failed for generation $gen: $sp is not rooted (nix-store --add-root: ${err:-no output}); a garbage collection may delete it"
        ok=0
      fi
    done
    # .done only when every path is rooted, so the next activation retries the rest.
    if [ "$ok" = 1 ]; then "${as_user[@]}" touch "$gen/gcroots/.done" || status=1; else status=1; fi
  done
}

compile_home() {
  local name=$1 home=$2 spec=$3
  if [ "$dry_run" = 1 ]; then
    say "$name ($home): plan"
    run_hermes "$home" compile --spec "$spec" --dry-run || status=1
    return 0
  fi
  ensure_home "$home" || { say "$name: cannot create $home"; status=1; return 0; }
  local errf rc
  errf=$(mktemp -t hermes-activate-err.XXXXXX) || { status=1; return 0; }
  # stderr still reaches the caller; a copy gives the summary its first error.
  rc=0
  { run_hermes "$home" compile --spec "$spec" --managed "$kind" 2>&1 1>&3 3>&- | tee "$errf" >&2; } 3>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    say "$name: hermes compile refused $spec; $home keeps the generation it had: $(first_error "$errf")"
    status=1
    rm -f "$errf"
    return 0
  fi
  rm -f "$errf"
  register_gc_roots "$home"
}

# A home managed by an earlier activation and not declared now: apply an empty spec (its links go,
# the settings and list items it owned are released) and drop the managed marker. Returns 1 when
# the release failed (the home stays in the state file and is retried next time).
release_home() {
  local home=$1 spec=$release_spec tmp="" rc=0
  [ -d "$home" ] && [ -e "$home/.managed" ] || return 0
  if [ "$dry_run" = 1 ]; then say "would release $home (no longer declared)"; return 0; fi
  if [ -z "$spec" ]; then
    tmp=$(mktemp -t hermes-release-spec.XXXXXX.json) || { status=1; return 1; }
    printf '{"version":1,"plugins":[],"npmPackages":[],"settings":{},"listPolicy":"union"}\n' >"$tmp"
    chmod 0644 "$tmp"
    spec=$tmp
  fi
  say "releasing $home: it is no longer declared"
  local saved=("${as_user[@]}")
  # As root without --run-as (a disabled module, whose user may be gone): act as the home's owner.
  if [ -z "$run_as" ] && [ "$(id -u)" = 0 ]; then
    local uid gid
    uid=$(stat -c %u "$home") gid=$(stat -c %g "$home")
    [ "$uid" != 0 ] && as_user=(setpriv "--reuid=$uid" "--regid=$gid" --clear-groups --)
  fi
  if run_hermes "$home" compile --spec "$spec"; then
    "${as_user[@]}" rm -f "$home/.managed"
  else
    say "could not release $home; it stays listed and is tried again at the next activation"
    status=1
    rc=1
  fi
  as_user=("${saved[@]}")
  [ -n "$tmp" ] && rm -f "$tmp"
  return "$rc"
}

declared=()
for ((i = 0; i < ${#homes[@]}; i += 3)); do
  compile_home "${homes[i]}" "${homes[i + 1]}" "${homes[i + 2]}"
  declared+=("${homes[i + 1]}")
done

if [ -n "$state" ]; then
  listed=("${declared[@]}")
  if [ -f "$state" ]; then
    while IFS= read -r old || [ -n "$old" ]; do
      [ -n "$old" ] || continue
      keep=0
      for h in "${declared[@]}"; do [ "$h" = "$old" ] && keep=1; done
      [ "$keep" = 1 ] && continue
      release_home "$old" || listed+=("$old")
    done <"$state"
  fi
  if [ "$dry_run" = 0 ]; then
    if [ ${#listed[@]} -eq 0 ]; then
      # Nothing managed any more (a disabled module, fully released): no state left behind.
      rm -f "$state"
    else
      mkdir -p "$(dirname "$state")"
      tmp_state="$state.tmp.$$"
      printf '%s\n' "${listed[@]}" >"$tmp_state" && mv -f "$tmp_state" "$state" || status=1
    fi
  fi
fi

exit "$status"
