#!/usr/bin/env bash
# Checks that the source tree keeps its layers, from the bottom up:
#
#   util      src/util, include/gb10tune/util, include/gb10tune/version.hpp: strings, host:port,
#             shell quoting, sizes, Expected, exit codes. Includes no other gb10tune header.
#   kernels   src/kernels, include/gb10tune/kernels: the CUDA code. Includes util and itself.
#   platform  src/platform, include/gb10tune/platform: the only code that touches the OS.
#             Includes util and itself, never the core.
#   core      src/core, every other include/gb10tune folder: the decisions, and each command's
#             text and JSON (src/core/render). Reaches the OS only through platform: includes no
#             OS header and calls no system function itself.
#   cli       src/cli and src/main.cpp: options over the core. Nothing below includes it; it
#             reaches the OS only through platform, like the core.
#
# What counts as reaching the OS (for util, the core and the CLI; the kernels talk to the CUDA
# runtime, and platform is where the rest is):
#   - including an OS header: <unistd.h>, <fcntl.h>, <poll.h>, <spawn.h>, <dlfcn.h>, <pwd.h>,
#     <grp.h>, <dirent.h>, <netdb.h>, <termios.h>, <signal.h>, <pthread.h>, <ifaddrs.h>,
#     <syslog.h>, <sys/...>, <linux/...>, <asm/...>, the CUDA runtime or NVML headers, OpenSSL's
#     <openssl/...> (TLS is libcurl's: no code of the tool speaks it itself). libcurl's
#     <curl/curl.h> is not the OS in this sense: the core's http module is the wrapper over it. The
#     address-format headers <arpa/inet.h> and <netinet/in.h> are allowed: inet_pton parses
#     text, it touches nothing;
#   - calling a function of SYSTEM_CALLS below, with or without a leading `::` (a member
#     call `x.read(`, `p->open(` or another namespace's `Fd::open(` is not such a call, and
#     neither is a declaration `Status read(`), or std::system, std::getenv, std::signal,
#     std::raise, or naming `environ`.
# The standard library's own files and threads (std::filesystem, fstreams, std::thread) are
# not the OS in this sense: they are portable C++ and stay allowed everywhere.
#
# Comments (`//`, and `/* */` within a line) and string and character literals are not looked
# at. Usage:
#   scripts/check_layers.sh [ROOT]   ROOT: the source tree (default: this script's project)
# Prints one line per violation (file:line: what, and the rule) and exits 1 when there is one,
# 2 when ROOT holds no sources.
set -euo pipefail

root=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"}
cd "$root"

SYSTEM_CALLS=(
  # processes and signals
  fork vfork clone execl execle execlp execv execve execvp execvpe fexecve posix_spawn
  posix_spawnp kill killpg waitpid waitid wait3 wait4 pidfd_open pidfd_send_signal
  pidfd_getfd setsid setpgid signal sigaction sigprocmask pthread_sigmask raise system popen
  pclose syscall prctl ptrace _exit
  # files and descriptors
  open openat open64 creat close read write pread pwrite readv writev lseek fsync fdatasync
  ftruncate truncate dup dup2 dup3 pipe pipe2 fcntl flock ioctl mmap munmap mkdtemp mkstemp
  unlink unlinkat rename renameat mkdir mkdirat rmdir chmod fchmod fchmodat chown fchown
  lchown symlink link readlink readlinkat realpath stat lstat fstat fstatat statx access
  faccessat opendir readdir closedir utimensat
  # network
  socket socketpair connect bind listen accept accept4 send recv sendto recvfrom sendmsg
  recvmsg shutdown setsockopt getsockopt getaddrinfo freeaddrinfo gethostbyname poll ppoll
  select pselect epoll_create epoll_create1 epoll_ctl epoll_wait
  # users, identity, environment, terminal, dynamic loading
  getuid geteuid getgid getegid getpid getppid getpwuid getpwuid_r getpwnam getpwnam_r
  getgrgid uname sysconf gethostname getenv secure_getenv setenv unsetenv putenv clearenv
  isatty tcgetattr tcsetattr dlopen dlsym dlclose dlerror
)

OS_HEADERS='unistd\.h|fcntl\.h|poll\.h|spawn\.h|dlfcn\.h|pwd\.h|grp\.h|dirent\.h|netdb\.h'
OS_HEADERS+='|termios\.h|signal\.h|pthread\.h|ifaddrs\.h|syslog\.h|sys/[^>]*|linux/[^>]*'
OS_HEADERS+='|asm/[^>]*|cuda\.h|cuda_runtime[^>]*|nvml\.h|openssl/[^>]*'

names=$(
  IFS='|'
  echo "${SYSTEM_CALLS[*]}"
)
# A call: the name after something that ends an expression (or a keyword that precedes one),
# optionally with a leading `::`, then `(`.
call_re="(?:^|[(\[,=!{};?|&]|(?<!:):|\breturn|\belse|\bthrow|\bco_return)\s*(?:::)?\b($names)\s*\("
std_re='\bstd::(system|getenv|signal|raise)\s*\(|\benviron\b'

violations=0

report() {  # what, rule; of the hit split_hit read last
  echo "$file:$line: $1 ($2)"
  violations=$((violations + 1))
}

# Sets `layer` to the layer of file $1, from its path.
layer_of() {
  case "$1" in
    src/util/* | include/gb10tune/util/* | include/gb10tune/version.hpp) layer=util ;;
    src/kernels/* | include/gb10tune/kernels/*) layer=kernels ;;
    src/platform/* | include/gb10tune/platform/*) layer=platform ;;
    src/cli/* | src/main.cpp) layer=cli ;;
    src/core/* | include/gb10tune/*) layer=core ;;
    *) layer=other ;;
  esac
}

# Sets `target` to the layer that include "$2" of file $1 names: gb10tune/<module>/… by its
# folder, cli/… the CLI, a plain relative name the including file's own folder; "climbs" for a
# name with "../" in it.
included_layer() {
  case "$2" in
    gb10tune/util/* | gb10tune/version.hpp) target=util ;;
    gb10tune/kernels/*) target=kernels ;;
    gb10tune/platform/*) target=platform ;;
    gb10tune/*) target=core ;;
    cli/*) target=cli ;;
    */../* | ../*) target=climbs ;;
    *)
      layer_of "$1"
      target=$layer
      ;;
  esac
}

# Sets `allowed` to the layers that layer $1 may include, as " a b ".
allowed_includes() {
  case "$1" in
    util) allowed=" util " ;;
    kernels) allowed=" kernels util " ;;
    platform) allowed=" platform util " ;;
    core) allowed=" core platform kernels util " ;;
    cli) allowed=" cli core platform kernels util " ;;
  esac
}

# Prints every line of its files as "file:line:code", with comments and string and character
# literals blanked (line numbers kept).
read -r -d '' blank_program <<'AWK' || true
{
  line = $0
  gsub(/\\\\/, "", line)                      # escaped backslashes
  gsub(/\\"/, "", line)                        # escaped quotes
  gsub(/\\'/, "", line)
  gsub(/"[^"]*"/, "\"\"", line)                # string literals
  gsub(/'[^']*'/, "''", line)                  # character literals
  sub(/\/\/.*$/, "", line)                     # line comments
  gsub(/\/\*([^*]|\*[^\/])*\*\//, "", line)   # block comments within a line
  print FILENAME ":" FNR ":" line
}
AWK

# Sets file, line, text and layer from a grep -nH hit "file:line:text".
split_hit() {
  file=${1%%:*}
  local rest=${1#*:}
  line=${rest%%:*}
  text=${rest#*:}
  layer_of "$file"
}

mapfile -t files < <(find src include -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \
  -o -name '*.cu' -o -name '*.cuh' -o -name '*.cpp.in' \) 2>/dev/null | LC_ALL=C sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "check_layers: no C++ sources under $root/src or $root/include; give the project's" \
    "folder" >&2
  exit 2
fi
layered=()    # every file of a layer
os_checked=() # the files that may not reach the OS: util, the core and the CLI
for file in "${files[@]}"; do
  layer_of "$file"
  case "$layer" in
    other) ;;
    util | core | cli) layered+=("$file") os_checked+=("$file") ;;
    *) layered+=("$file") ;;
  esac
done

# 1. Quoted includes: only of the layer itself and the layers below it.
while IFS= read -r hit; do
  split_hit "$hit"
  [[ $text =~ \"([^\"]*)\" ]] || continue
  name=${BASH_REMATCH[1]}
  from=$layer
  included_layer "$file" "$name"
  allowed_includes "$from"
  if [ "$target" = climbs ]; then
    report "includes \"$name\"" \
      "a gb10tune header is named by its module, not by climbing out of a folder"
  elif [[ "$allowed" != *" $target "* ]]; then
    report "includes \"$name\"" "the $from layer may include only:${allowed% }"
  fi
done < <(grep -nHE '^\s*#\s*include\s*"' /dev/null "${layered[@]}" || true)

# 2. OS headers in util, the core and the CLI.
while IFS= read -r hit; do
  split_hit "$hit"
  [[ $text =~ \<([^\>]*)\> ]]
  report "includes <${BASH_REMATCH[1]}>" "the $layer layer reaches the OS only through src/platform"
done < <(grep -nHE "^\s*#\s*include\s*<($OS_HEADERS)>" /dev/null "${os_checked[@]}" || true)

# 3. System calls in util, the core and the CLI (comments and literals blanked).
while IFS= read -r hit; do
  split_hit "$hit"
  call=$(grep -oP "$call_re|$std_re" <<<"$text" | head -1 |
    grep -oP "\bstd::\w+|\benviron\b|\b($names)(?=\s*\()" | tail -1)
  report "uses $call" "the $layer layer reaches the OS only through src/platform"
done < <(awk "$blank_program" /dev/null "${os_checked[@]}" |
  grep -P "^[^:]+:\d+(?=:).*(?:$call_re|$std_re)" || true)

if [ "$violations" -gt 0 ]; then
  echo "check_layers: $violations violation(s) of the layers (the rules: scripts/check_layers.sh," \
    "README's Layout section)" >&2
  exit 1
fi
echo "check_layers: ${#layered[@]} files keep their layers"
