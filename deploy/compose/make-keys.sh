#!/bin/sh
# Makes the API keys of the compose demo (docs/security.md): one for you, one
# with the `admin` scope for Prometheus's scrapes. corepool gets only their
# SHA-256 (secrets/api-keys); Prometheus gets its own key in clear
# (secrets/prometheus-api-key). Run once before `docker compose up`; run again
# to rotate (corepool re-reads the file when it changes).
set -eu
cd "$(dirname "$0")"
# The folder keeps other users of this machine out; the files stay readable to
# the containers' non-root users, which see them through bind mounts.
mkdir -p -m 700 secrets
umask 022
sha256() { printf %s "$1" | openssl dgst -sha256 -r | cut -d' ' -f1; }
you=$(openssl rand -hex 24)
prometheus=$(openssl rand -hex 24)
printf 'you:%s\nprometheus:%s:admin\n' "$(sha256 "$you")" "$(sha256 "$prometheus")" > secrets/api-keys.next
mv secrets/api-keys.next secrets/api-keys
printf %s "$prometheus" > secrets/prometheus-api-key
echo "Your API key (send it as x-api-key): $you"
