#!/bin/sh
# http_server.sh start DIR | stop DIR - the HTTP server of the remote-model
# tests: nginx on 127.0.0.1 (a free port, written to DIR/port), serving
# DIR/www with its own config, logs and temporary files under DIR.
#   /files/F      the file, with Range (nginx's own)
#   /redirect/F   302 to /files/F
#   /loop         a redirect loop
#   /gated/F      401 with Hugging Face's JSON error
#   /limited/F    429
#   /apikey/F     the file with "Authorization: Bearer sk-ggfit-test", else
#                 401 (llama-server --api-key's)
#   /norange/F    the file, Range ignored (200 with the whole body)
#   /slow/F       the file at 10 bytes/s (the stall timeout)
#   /api/...      a Hugging Face API laid out as files (DIR/www/api/...)
#   /U/M/resolve/COMMIT/F   302 to /cdn/U/M/F, as Hugging Face's CDN
# start prints the port; exit 77 when nginx is not installed. With MODELS
# (start DIR MODELS) it first lays out DIR/www: /files/ holds MODELS/*.gguf
# and big.gguf (gpt-oss-120b's header in a sparse 4 GiB file), and the hub
# holds the repo ggfit/Qwen3-GGUF (six quants, an mmproj, an imatrix, a
# split model of two shards that tests/mksplit.py writes from
# llama-3.1-8b's header)
# and ggfit/gated-GGUF (401).
# Every reply carries CORS headers (Access-Control-Allow-Origin *, the
# request headers ggfit sends allowed, the ones it reads exposed; errors
# and redirects too) and OPTIONS is answered 204 everywhere, so that a page
# on another origin (or file://) can read it all: tests/web/.
# With PAGE (start DIR MODELS PAGE) a second server, on another free port
# written to DIR/page_port, serves the folder PAGE (the web page:
# build-wasm/web) from another origin than the hub's; its log is
# DIR/page_access.log.
set -e
cmd=$1
dir=$2
models=$3
page=$4
commit=0123456789abcdef0123456789abcdef01234567
nginx=$(command -v nginx || ls /usr/sbin/nginx 2>/dev/null || true)
case $cmd in
stop)
    [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
    # wait for the master to remove its pid file (bounded)
    n=0
    while [ -f "$dir/nginx.pid" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    exit 0 ;;
start) ;;
*) echo "usage: http_server.sh start DIR [MODELS [PAGE]] | stop DIR" >&2; exit 2 ;;
esac
[ -n "$nginx" ] || { echo "nginx is not installed (scripts/deps.sh test installs it)" >&2; exit 77; }
mkdir -p "$dir/tmp" "$dir/www"
chmod 755 "$dir" "$dir/www"
if [ -n "$models" ]; then
    mkdir -p "$dir/www/files" "$dir/www/cdn/ggfit/Qwen3-GGUF" \
        "$dir/www/api/models/ggfit/Qwen3-GGUF/tree"
    cp "$models"/*.gguf "$dir/www/files/"
    cp "$models/gpt-oss-120b-mxfp4.gguf" "$dir/www/files/big.gguf"
    truncate -s 4G "$dir/www/files/big.gguf"
    hub=$dir/www/cdn/ggfit/Qwen3-GGUF
    cp "$models/qwen3-0.6b-f16.gguf" "$hub/Qwen3-0.6B-F16.gguf"
    cp "$models/qwen3-0.6b-f16.gguf" "$hub/Qwen3-0.6B-Q8_0.gguf"
    cp "$models/qwen3-14b-f16.gguf" "$hub/Qwen3-14B-F16.gguf"
    cp "$models/qwen3-14b-Q4_K_M.gguf" "$hub/Qwen3-14B-Q4_K_M.gguf"
    cp "$models/qwen3-30b-a3b-Q4_K_M.gguf" "$hub/Qwen3-30B-A3B-Q4_K_M.gguf"
    cp "$models/qwen3-next-80b-a3b-Q4_K_M.gguf" "$hub/Qwen3-Next-80B-A3B-Q4_K_M.gguf"
    # the split model: llama-3.1-8b's header dealt into two shards
    python3 "$(dirname "$0")/mksplit.py" "$models/llama-3.1-8b-Q4_K_M.gguf" \
        "$hub/Qwen3-Split-Q6_K" 2
    cp "$models/qwen3-0.6b-f16.gguf" "$hub/imatrix-Qwen3-14B-Q4_K_M.gguf"
    # a projector llama-server measures along (--for server counts it)
    cp "$(dirname "$0")/../data/tiny/mmproj-qwen25vl-0.gguf" "$hub/mmproj-Qwen3-F16.gguf"
    echo "# Qwen3" >"$hub/README.md"
    printf '{"branches":[{"name":"dev","ref":"refs/heads/dev","targetCommit":"%s"},{"name":"main","ref":"refs/heads/main","targetCommit":"%s"}],"tags":[],"converts":[]}\n' \
        fedcba9876543210fedcba9876543210fedcba98 "$commit" \
        >"$dir/www/api/models/ggfit/Qwen3-GGUF/refs"
    {
        printf '['
        sep=
        for f in .gitattributes Qwen3-0.6B-F16.gguf Qwen3-0.6B-Q8_0.gguf Qwen3-14B-F16.gguf \
                 Qwen3-14B-Q4_K_M.gguf Qwen3-30B-A3B-Q4_K_M.gguf \
                 Qwen3-Next-80B-A3B-Q4_K_M.gguf Qwen3-Split-Q6_K-00001-of-00002.gguf \
                 Qwen3-Split-Q6_K-00002-of-00002.gguf README.md \
                 imatrix-Qwen3-14B-Q4_K_M.gguf mmproj-Qwen3-F16.gguf; do
            printf '%s{"type":"file","oid":"%s","size":1,"path":"%s"}' "$sep" "$commit" "$f"
            sep=,
        done
        printf ',{"type":"directory","oid":"%s","size":0,"path":"docs"}]\n' "$commit"
    } >"$dir/www/api/models/ggfit/Qwen3-GGUF/tree/$commit"
    chmod -R a+rX "$dir/www"
fi
user=
[ "$(id -u)" -eq 0 ] && user="user root;"
tries=0
while [ $tries -lt 20 ]; do
    tries=$((tries + 1))
    port=$(( 20000 + ( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ) ))
    page_server=
    if [ -n "$page" ]; then
        page_port=$(( 20000 + ( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000 ) ))
        [ "$page_port" -ne "$port" ] || continue
        page_server="server {
        listen 127.0.0.1:$page_port;
        root $(cd "$page" && pwd);
        access_log $dir/page_access.log sent;
        types {
            text/html html; text/javascript js; text/css css; image/svg+xml svg;
            application/wasm wasm; application/json json; image/png png;
        }
        add_header Cache-Control no-store always;
    }"
    fi
    cat >"$dir/nginx.conf" <<EOF
$user
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 64; }
http {
    log_format sent '\$request_uri \$status \$body_bytes_sent \$request_method "\$http_range"';
    access_log $dir/access.log sent;
    client_body_temp_path $dir/tmp;
    proxy_temp_path $dir/tmp;
    fastcgi_temp_path $dir/tmp;
    uwsgi_temp_path $dir/tmp;
    scgi_temp_path $dir/tmp;
    default_type application/octet-stream;
    sendfile on;
    server {
        listen 127.0.0.1:$port;
        root $dir/www;
        add_header Access-Control-Allow-Origin * always;
        add_header Access-Control-Allow-Headers "Range, Authorization, If-None-Match" always;
        add_header Access-Control-Expose-Headers "Content-Range, Content-Length, ETag, Accept-Ranges" always;
        # the preflight, before any location's redirect or 401
        if (\$request_method = OPTIONS) { return 204; }
        location /files/ { }
        location /cdn/ { }
        location /api/ { default_type application/json; }
        location /api/models/ggfit/gated-GGUF/ {
            default_type application/json;
            return 401 '{"error":"Access to model ggfit/gated-GGUF is restricted. You must have access to it and be authenticated to access it. Please log in."}';
        }
        location /redirect/ { rewrite ^/redirect/(.*)\$ /files/\$1 redirect; }
        location = /loop { return 302 /loop; }
        location /gated/ {
            default_type application/json;
            return 401 '{"error":"Access to model ggfit/gated is restricted. You must have access to it and be authenticated to access it. Please log in."}';
        }
        location /limited/ { return 429; }
        location /apikey/ {
            alias $dir/www/files/;
            if (\$http_authorization != "Bearer sk-ggfit-test") {
                return 401 '{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}';
            }
        }
        location /norange/ { alias $dir/www/files/; max_ranges 0; }
        location /slow/ { alias $dir/www/files/; limit_rate 10; }
        location ~ ^/([^/]+/[^/]+)/resolve/[0-9a-f]+/(.*)\$ { return 302 /cdn/\$1/\$2; }
    }
    $page_server
}
EOF
    if "$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" 2>"$dir/start.log"; then
        echo "$port" >"$dir/port"
        [ -z "$page" ] || echo "$page_port" >"$dir/page_port"
        echo "$port"
        exit 0
    fi
    grep -q "Address already in use" "$dir/start.log" "$dir/error.log" 2>/dev/null || break
done
cat "$dir/start.log" "$dir/error.log" >&2 2>/dev/null || true
exit 1
