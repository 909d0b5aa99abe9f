# Puts the pinned Node.js release of one supported line first on PATH, in this shell:
#   source scripts/use-node.sh        # Node 24, the line sqlscribe is built and tested for
#   source scripts/use-node.sh 22     # Node 22, the oldest line it supports
# The release comes from the npm registry into .node/ (ignored by git); npm itself stays the
# machine's own and runs on the Node first on PATH. Native headers for a compile that needs
# them (none does today: better-sqlite3 ships prebuilt binaries) are the release's own.
sqlscribe_node_line="${1:-24}"
case "$sqlscribe_node_line" in
  24) sqlscribe_node_version=24.21.0 ;;
  22) sqlscribe_node_version=22.23.3 ;;
  *) echo "use-node: supported lines are 24 and 22, not $sqlscribe_node_line" >&2; return 2 2>/dev/null || exit 2 ;;
esac
sqlscribe_node_bin="$(bash "$(dirname "${BASH_SOURCE[0]}")/node-from-registry.sh" "$sqlscribe_node_version")" || return 2 2>/dev/null || exit 2
export PATH="$sqlscribe_node_bin:$PATH"
export npm_config_nodedir="${sqlscribe_node_bin%/bin}"
echo "use-node: $(command -v node) $(node --version)" >&2
unset sqlscribe_node_line sqlscribe_node_version sqlscribe_node_bin
