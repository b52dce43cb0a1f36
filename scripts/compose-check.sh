#!/usr/bin/env bash
# The container check of docs/production.md: builds the image from Dockerfile, starts compose.yaml
# (PostgreSQL and two gateway instances), waits for their health checks, creates a merchant
# through one instance and sends a signed sale through each. It then reads each sale through the
# other instance, and with one instance stopped reads both through the one left, which only a
# shared PostgreSQL can answer. Stops and removes everything at the end, volumes included.
# Needs Docker and curl; where Docker Hub cannot be reached it checks against stand-in base images
# built from Debian's packages (scripts/offline-base-images/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if docker compose version >/dev/null 2>&1; then compose=(docker compose); else compose=(docker-compose); fi
"${compose[@]}" version >/dev/null 2>&1 || { echo "[compose] needs docker compose (or docker-compose)" >&2; exit 1; }
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-paygate-check}"
eval "$(scripts/offline-base-images/build.sh | grep -E '^(NODE|POSTGRES)_IMAGE=[A-Za-z0-9._/:-]+$')"
export NODE_IMAGE POSTGRES_IMAGE
echo "[compose] base images: $NODE_IMAGE and $POSTGRES_IMAGE"
export PAYGATE_MASTER_KEY="${PAYGATE_MASTER_KEY:-$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')}"
export PAYGATE_ADMIN_TOKEN="${PAYGATE_ADMIN_TOKEN:-compose-check-admin-token}"
trap '"${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true' EXIT
"${compose[@]}" build
"${compose[@]}" up -d

healthy() { [ "$(docker inspect --format '{{.State.Health.Status}}' "$("${compose[@]}" ps -q "$1")")" = healthy ]; }
for service in db gateway-a gateway-b; do
  for _ in $(seq 1 90); do healthy "$service" && break; sleep 2; done
  healthy "$service" || { "${compose[@]}" logs --tail 50 "$service"; echo "[compose] $service never became healthy"; exit 1; }
  echo "[compose] $service healthy"
done
user=$("${compose[@]}" exec -T gateway-a id -un)
[ "$user" = paygate ] || { echo "[compose] the gateway runs as '$user', not the non-root user paygate"; exit 1; }

secret=compose-secret-1
"${compose[@]}" exec -T gateway-a node dist/cli.js merchant create \
  --merchant-id compose-shop --secret "$secret" --application-key compose-app >/dev/null
echo "[compose] merchant compose-shop created through gateway-a"

# Signs a JSON body inside gateway-b (paygate sign), so the host needs no Node.js; gateway-b is
# the instance left running to the end.
sign() { "${compose[@]}" exec -T gateway-b node dist/cli.js sign --secret "$secret" --now 2>/dev/null; }
post() { curl -fsS --max-time 30 -H 'content-type: application/json' -d "$2" "http://127.0.0.1:$1$3"; }
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }

declare -A trace_of
for port in 8081 8082; do
  body=$(printf '{"merchant_id":"compose-shop","application_key":"compose-app","transaction_type":"sale","order_id":"compose-%s","amount":1999,"currency":"USD","card_number":"4111111111111111","card_exp":"12/2035","cvv":"568","pin":"c-1","dob":"1990-04-12","email":"a@example.com","phone":441234567890,"requester_ip":"203.0.113.7","address":"1 Main Street","city":"London","country":"GB","first_name":"A","last_name":"B","zip":"SW1A 1AA","return_url":"https://shop.example/r","notification_url":"https://shop.example/n","version":"1.2"}' "$port" | sign)
  answer=$(post "$port" "$body" /api/process)
  [ "$(echo "$answer" | field status)" = 0 ] && [ "$(echo "$answer" | field transaction_status)" = approved ] \
    || { echo "[compose] sale through :$port was not approved: $answer"; exit 1; }
  trace_of[$port]=$(echo "$answer" | field trace_id)
  echo "[compose] signed sale through :$port approved, trace_id ${trace_of[$port]}"
done

# Reads the sale made through one instance via the given port.
read_sale() {
  local body
  body=$(printf '{"merchant_id":"compose-shop","application_key":"compose-app","trace_id":"%s","version":"1.2"}' "$2" | sign)
  post "$1" "$body" /api/transaction-status
}
for pair in "8081 8082" "8082 8081"; do
  set -- $pair
  answer=$(read_sale "$2" "${trace_of[$1]}")
  [ "$(echo "$answer" | field transaction_status)" = approved ] \
    || { echo "[compose] the sale made through :$1 is not visible through :$2: $answer"; exit 1; }
done
echo "[compose] each instance reads the other's sale"
"${compose[@]}" stop gateway-a >/dev/null 2>&1
for port in 8081 8082; do
  answer=$(read_sale 8082 "${trace_of[$port]}")
  [ "$(echo "$answer" | field transaction_status)" = approved ] \
    || { echo "[compose] with gateway-a stopped, gateway-b lost the sale of :$port: $answer"; exit 1; }
done
echo "[compose] with gateway-a stopped, gateway-b still reads both sales"
echo "[compose] signed sales served on PostgreSQL through two instances"
