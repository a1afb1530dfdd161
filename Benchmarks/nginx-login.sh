# Sourced by the login benchmarks: one nginx worker answering the FCSDK login contract on 127.0.0.1:$port (POST
# /csdk-sample/SDK/login gives a fresh session id, DELETE …/login/id/<id> logs out), with room for 30,000
# connections. Expects $port; `nginx_cpu` pins the worker to that CPU; `nginx_log=1` writes a line per request to
# $work/access.log (send nginx USR1 to flush it). Sets $work and an EXIT trap that stops nginx and removes $work.

command -v nginx >/dev/null || { apt-get update -qq && apt-get install -y -qq nginx >/dev/null; }
work=$(mktemp -d)
chmod 755 "$work"  # the nginx worker runs as an unprivileged user
access_log="access_log off;"
[ -z "${nginx_log:-}" ] || access_log="log_format line '\$request_method \$status'; access_log $work/access.log line buffer=256k;"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 30000; }
http {
    $access_log
    keepalive_timeout 75s;
    keepalive_requests 100000000;
    server {
        listen 127.0.0.1:$port backlog=4096;
        default_type application/json;
        location = /csdk-sample/SDK/login { return 200 '{"sessionid":"\$request_id"}'; }
        location ^~ /csdk-sample/SDK/login/id/ { return 200 '{}'; }
    }
}
CONF
${nginx_cpu:+taskset -c "$nginx_cpu"} nginx -c "$work/nginx.conf"
trap 'kill $(cat "$work/nginx.pid") 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 0.5
