#!/bin/sh
# Copies what a whole sqlscribe server is restored from, while it runs (docs/deploy.md,
# "Backups and restoring a whole server"):
#   sqlscribe-backup.sh <journal file> <backup root>
#   e.g. sqlscribe-backup.sh /var/lib/sqlscribe/journal/statements.jsonl /srv/backup/sqlscribe
# Each run makes <backup root>/<UTC time>/ holding the journal's checkpoint, the snapshot
# directory (SNAPSHOT_DIR, by default `snapshots` beside the journal, as the server's
# -snapshot-dir) and every journal file, rotated and gzipped ones included; `latest` points at the
# newest; only the newest KEEP (default 14) are kept. Never the live .db files: the rounds and the
# journal rebuild them (`replay`), and a .db copied mid-write is not a database.
#
# Order matters, and each run checks it got a consistent set:
#   1. the checkpoint first, so it never claims more than the journal copied after it;
#   2. the snapshot rounds before the journal, so the journal copied reaches past every round;
#   3. the journal files; if a rotation, a compression, a round or retention changed the file list
#      while copying, a file may be missing from the copy: the whole copy is taken again.
set -eu
journal=${1:?usage: sqlscribe-backup.sh <journal file> <backup root>}
root=${2:?usage: sqlscribe-backup.sh <journal file> <backup root>}
dir=$(dirname "$journal")
active=$(basename "$journal")
stem=${active%.*}
ext=.${active##*.}
snapshots=${SNAPSHOT_DIR:-$dir/snapshots}
keep=${KEEP:-14}

# The active file and its rotated siblings (<stem>.<yyyymmdd-hhmmss>.<n><ext>[.gz]), nothing else:
# not the index (rebuilt at start), the locks, nor a rotation's or a compression's temporary files.
journal_files() {
  ( cd "$dir" && ls -1 | grep -E "^$stem(\.[0-9]{8}-[0-9]{6}\.[0-9]+)?\\$ext(\.gz)?\$" ) || true
}
listing() {
  journal_files
  if [ -d "$snapshots" ]; then ( cd "$snapshots" && ls -1 ); fi
}

mkdir -p "$root"
name=$(date -u +%Y%m%dT%H%M%SZ)
for attempt in 1 2 3 4 5; do
  work="$root/.$name.partial"
  rm -rf "$work"
  mkdir -p "$work/snapshots"
  before=$(listing)
  if [ -f "$journal.checkpoint" ]; then cp -p "$journal.checkpoint" "$work/"; fi
  copied=yes
  if [ -d "$snapshots" ]; then cp -pR "$snapshots/." "$work/snapshots/" || copied=no; fi
  for file in $(journal_files); do cp -p "$dir/$file" "$work/" || copied=no; done
  after=$(listing)
  if [ "$copied" = yes ] && [ "$before" = "$after" ]; then
    sync
    mv "$work" "$root/$name"
    ln -sfn "$name" "$root/latest"
    # Oldest first; the names sort by time.
    ls -1d "$root"/[0-9]*Z | head -n -"$keep" | xargs -r rm -rf
    echo "sqlscribe-backup: $root/$name"
    exit 0
  fi
  echo "sqlscribe-backup: the files changed while copying (attempt $attempt), copying again" >&2
  sleep 1
done
rm -rf "$work"
echo "sqlscribe-backup: no consistent copy after 5 attempts" >&2
exit 1
