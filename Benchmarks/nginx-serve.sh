# Sourced by the nginx benchmarks (nginx-target.sh, nginx-h2-target.sh, tls-throughput.sh): serves a small JSON file
# from $work with one nginx worker pinned to CPU 0 on 127.0.0.1:$port.
#
#   serve_small_json "LISTEN-OPTIONS" "SERVER-LINES" "HTTP-LINES"
#
# LISTEN-OPTIONS follow the address (`ssl`, `ssl http2`, nothing for plain HTTP); SERVER-LINES go into the server
# block (certificates, protocols) and HTTP-LINES into the http block. Expects $work (readable by nginx's unprivileged
# worker) and $port; sets an EXIT trap that stops nginx and removes $work.
serve_small_json() {
    local listen=$1 server_lines=$2 http_lines=$3
    printf '{"status":"ok","service":"bench","items":[1,2,3]}' > "$work/small.json"
    cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 10000000;
    $http_lines
    server {
        listen 127.0.0.1:$port $listen;
        $server_lines
        root $work;
        location / { default_type application/json; }
    }
}
CONF
    trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
    taskset -c 0 nginx -c "$work/nginx.conf"
    sleep 0.5
}
