#!/usr/bin/env bash
# Where Docker runs: builds the image, starts compose.yaml (PostgreSQL and two gateways), creates
# a merchant through one instance and sends a signed sale through each, then stops everything.
# Not part of npm test: the test machines have no container runtime (docs/production.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PAYGATE_MASTER_KEY="${PAYGATE_MASTER_KEY:-$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")}"
export PAYGATE_ADMIN_TOKEN="${PAYGATE_ADMIN_TOKEN:-compose-check-admin-token}"
trap 'docker compose down -v >/dev/null 2>&1 || true' EXIT
docker compose up -d --build --wait
merchant=$(docker compose exec -T gateway-a node dist/cli.js merchant create --merchant-id compose-shop --secret compose-secret-1 --application-key compose-app)
echo "[compose] $merchant"
for port in 8081 8082; do
  body=$(printf '{"merchant_id":"compose-shop","application_key":"compose-app","transaction_type":"sale","order_id":"compose-%s","amount":1999,"currency":"USD","card_number":"4111111111111111","card_exp":"12/2035","cvv":"568","pin":"c-1","requester_ip":"203.0.113.7","country":"GB","email":"a@example.com","first_name":"A","last_name":"B","return_url":"https://shop.example/r","notification_url":"https://shop.example/n","version":"1.2"}' "$port" \
    | node dist/cli.js sign --secret compose-secret-1 --now 2>/dev/null)
  answer=$(curl -fsS -H 'content-type: application/json' -d "$body" "http://127.0.0.1:$port/api/process")
  echo "[compose] :$port $answer"
  echo "$answer" | grep -q '"status":0' || { echo "[compose] sale through :$port failed"; exit 1; }
done
echo "[compose] signed sales served by both instances on PostgreSQL"
