/// The text of `--help` for each command; tests compare it as expected output.
public enum HelpText {
    public static let version = "0.1.0"

    public static func text(for topic: String?) -> String? {
        switch topic {
        case nil: overview
        case "run", "simulate": run
        case "validate": validate
        case "serve": serve
        case "report": report
        case "compare": compare
        case "merge": merge
        default: nil
        }
    }

    static let overview = """
        authload \(version) — load and soak testing for authentication back ends

        USAGE: authload <command> [options]

        COMMANDS:
          run PROFILE        Run a load profile and write an HTML/CSV report
          simulate PROFILE   Rehearse it on virtual time in process (run --simulate)
          validate PROFILE   Check a profile without sending any traffic
          serve              Start the embedded staging server (all four flows)
          report DIR         Rebuild report.html and the CSVs from DIR/result.json
          compare BASE NEW   Compare two runs' result.json; exit 2 on a regression
          merge DIR...       One report of a sharded run from every shard's result.json
          help [COMMAND]     Show help for a command

        OPTIONS:
          -h, --help         Show help
          --version          Show the version

        EXAMPLES:
          authload run Profiles/demo.json
          authload simulate Profiles/mixed.json --duration 24h
          authload validate Profiles/demo.json
          authload serve --port 8080
          authload serve --port 8443 --tls --cert-out staging.pem
          authload compare Reports/last-good Reports/tonight --p99 30%
          authload merge Reports/shard-0 Reports/shard-1 --out Reports/merged

        EXIT STATUS: 0 pass, 1 run error, 2 threshold failed, 3 generator overloaded,
                     64 bad arguments or profile, 130 interrupted.
        """

    static let run = """
        USAGE: authload run PROFILE [--out DIR] [--duration D] [--users N] [--quiet] [--metrics-listen ADDR]
                            [--shard I/N | --shard-from-env] [--start-at TIME] [--simulate [--config FILE] [--threads N]]
               authload simulate PROFILE [options]   (the same as run --simulate)

        Runs the load described by PROFILE (JSON) and writes report.html, summary.csv,
        timeseries.csv, errors.csv, junit.xml, result.json and, for load.stages,
        capacity.csv into the report directory. A target of {"embedded": {...}} starts
        the staging server inside this process on 127.0.0.1.

        FLOWS (flows[].kind): fcsdk-login, okta-idx-mfa, gccs-auth (REST and a STOMP status
        stream over WebSocket), streem-session (held session, token refresh), http. Several
        flows with "weight"s make a mix. Per-user data: users.csv (a CSV file) or templates.

        COUNTS: "HTTP requests" are the requests sent on the wire (retries, WebSocket upgrades
        and each call of a two-call refresh included): what the server's access log counts.
        Steps are timed samples of requests; events (a pushed GCCS status, a retry wait, a
        Streem token expiry) are counted and timed but are not requests.

        THRESHOLDS: "steps" pools every request step (not events). Latency bounds judge
        successful samples ("samples": "all" to include failed ones), so instant errors
        cannot make latency look better; error rates count every sample.

        LIVE METRICS: with --metrics-listen (or metrics.listen) a soak can be watched in
        Prometheus and Grafana while it runs: counters, latency histograms, active users,
        generator health and each threshold's state (deploy/grafana/authload.json).

        CHECKPOINTS: every metrics.checkpoint (default 10s) result.json is saved and finished
        intervals are appended to timeseries.csv; if the process is killed, `authload report
        DIR` rebuilds the rest from the last checkpoint, as a run interrupted at its time.

        HTTPS: certificates are checked against the system's trusted certificates and the
        target's host name. A staging stack with its own CA: "tls": {"caFile": "ca.pem"}
        in the target trusts that PEM bundle instead ("addSystemRoots": true: beside the
        system's); "serverName" is the name to send and verify for a baseURL that is an
        address; "clientCertificate" and "clientKey" (PEM) answer servers that require
        mutual TLS. One handshake before the load checks it: a certificate that fails
        ends the run (exit 1) with one line saying why and which key to set.
        "insecureSkipTLSVerify": true accepts any certificate and prints a warning.
        {"embedded": {"tls": true}} serves HTTPS with a certificate made for the run,
        which only insecureSkipTLSVerify accepts.

        OPTIONS:
          -o, --out DIR       Report directory (default: Reports/<profile>-<UTC time>)
          -d, --duration D    Override load.duration, e.g. 30s, 5m, 1h
          -u, --users N       Override load.users
          -q, --quiet         No progress output; print only the report path
          --metrics-listen ADDR
                              Serve live metrics for Prometheus at http://ADDR/metrics during the run
                              and metrics.linger (default 5s) after it: PORT (on 127.0.0.1) or
                              HOST:PORT; overrides the profile's metrics.listen
          --shard I/N         Run shard I of N copies of this profile: users and arrivals n
                              with n mod N = I, numbered as in the whole run; then
                              authload merge makes one report of all N
          --shard-from-env    The same, from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)
                              and AUTHLOAD_SHARD_COUNT
          --start-at TIME     Wait until TIME (RFC 3339 UTC, e.g. 2026-11-24T02:00:00Z, or +30s)
                              so every shard's intervals line up
          --simulate          Rehearse on virtual time: the same load, flows, thresholds and
                              report against the embedded services in this process, the clock
                              jumping to the next event whenever every user waits (a night in
                              seconds to minutes). Whatever baseURL says, no socket is opened
                              (except --metrics-listen's); the report says "simulated".
                              Deterministic for a given seed. The process starts itself again
                              once, with a larger glibc malloc cache (docs/simulation.md;
                              AUTHLOAD_ALLOCATOR_TUNING=off keeps the process as it is)
          -c, --config FILE   With --simulate: the services' latency, error and capacity models,
                              as for serve (default: target.embedded, else serve's defaults)
          --threads N         With --simulate: N shards of the run on N threads, each against
                              services of its own, merged as authload merge does (not with a
                              capacity model, which one set of workers must serve)

        LOAD MODELS: "closed" (default): load.users loop flow → think → flow.
        "open": load.arrivalRate ("100/s", "600/m") starts a new user per arrival, who
        runs one flow and leaves; load.maxUsers caps users alive at once (default 10000).
        Open-model flows are timed from when they were due, so a stalled server shows in
        full. load.stages [{"duration": "30s", "target": 100}, ...] ramps users or the
        rate linearly (a "0s" stage jumps).

        GENERATOR: schedule lag (start − due), dropped arrivals and CPU are reported;
        "generator": {"maxLagP99": "100ms", "maxDroppedRate": 0.01, "dropAfter": "1s"}
        (the defaults) sets when the run exits 3: then it says nothing about the server.

        UNREACHABLE TARGET: a user whose flow cannot connect (refused, unreachable, DNS,
        TLS handshake) waits 100 ms more before its next, doubling to 5 s, until one gets
        through. When nothing has succeeded for generator.unreachableAfter (default 30s;
        "0s": never) while connections fail, the run stops, prints one line naming the
        target and the cause, writes its report and exits 1.

        PROGRESS: one line per second on a terminal (elapsed, users, req/s, p95, errors
        and their share of the request steps attempted); plain log lines every 5 s otherwise.

        STOPPING: the first Ctrl-C (SIGINT) or SIGTERM stops new flows, lets in-flight
        flows finish within load.gracefulStop, writes the partial report and exits 130.
        A second one cancels what is still running.

        EXIT STATUS: 0 pass, 1 run error (e.g. no flow succeeded), 2 threshold failed,
                     3 generator could not keep its schedule, 64 bad profile, 130 interrupted.
        """

    static let validate = """
        USAGE: authload validate PROFILE

        Checks PROFILE as `run` would — JSON syntax, every field, flow kinds and options,
        the embedded server's options — and sends no traffic. Prints a one-line summary,
        or one line naming the field and the problem (exit 64), e.g.
          demo.json: load.users: must be greater than 0, found -5
        """

    static let serve = """
        USAGE: authload serve [--port P] [--host H] [--config FILE] [--tls [--cert-out FILE]]

        Starts the embedded staging server in the foreground until Ctrl-C. It serves the
        staging side of every flow: FCSDK login (/csdk-sample/SDK/login), Okta IDX
        (/oauth2/default/v1/interact, /idp/idx/...), GCCS (/api/v3/auth..., STOMP over
        WebSocket at /ws/v3/app/websocket), Streem (/v1/..., /openid/token) and GET /health.
        It speaks HTTP/1.1 and HTTP/2: h2 by ALPN with --tls, h2c with prior knowledge
        without; WebSocket stays on HTTP/1.1. It prints the protocols it accepts.
        When it stops it prints its access log: requests by method and route, numbers in
        a path written {n} and ids (hex, UUIDs, tokens) {id}; at most 48 routes, the rest
        counted under "other".

        OPTIONS:
          -p, --port P        Port to listen on (default 8080; 0 picks a free one)
          --host H            Numeric address to listen on (default 127.0.0.1)
          -c, --config FILE   JSON options, the same as a profile's target.embedded, e.g.
                              {"fcsdk": {"latency": {"fixed": "20ms"}, "errorRate": 0.05}}
          --tls               Serve HTTPS with a self-signed certificate (EC P-256, valid 1 day,
                              for localhost, 127.0.0.1 and ::1) made at start; prints its
                              SHA-256 fingerprint
          --cert-out FILE     Write that certificate (PEM) to FILE, for clients to trust
                              (a profile's target.tls.caFile, curl --cacert)
        """

    static let report = """
        USAGE: authload report REPORT_DIR

        Rebuilds report.html, summary.csv, timeseries.csv and errors.csv from
        REPORT_DIR/result.json (or from a result.json path given directly).

        A run killed before its final report (kill -9, a crash) left only its last
        checkpoint: the rebuilt report says "interrupted", with that checkpoint's time, in
        its header, junit.xml and result.json.

        EXIT STATUS: the one the run's result implies, as `authload run` would have
        exited (130 for a killed run); 64 when result.json cannot be read.
        """

    static let compare = """
        USAGE: authload compare BASE NEW [--p50 T] [--p99 T] [--error-rate T] [--min-delta D] [--profile FILE]
                                [--force]

        Compares NEW with BASE (each a result.json or a report directory): per flow and
        step, p50, p99 and error rate, base → new. A series is a regression when its p50
        or p99 grew by more than its tolerance (and by at least --min-delta), when its
        error rate grew by more than --error-rate, or when NEW lacks it.

        First it says how the runs' plans differ (users, arrival rate, stages, ramp-up,
        duration, think time, command-line options, profile file digest). Runs under
        different load are refused (exit 64): latency grows with load, so the table would
        report the load, not the server.

        OPTIONS:
          --p50 T             Allowed p50 increase, e.g. 20% or 0.2 (default 20%)
          --p99 T             Allowed p99 increase (default 20%)
          --error-rate T      Allowed error-rate increase in points, e.g. 1% (default 1%)
          --min-delta D       Latency changes smaller than this never count (default 1ms)
          --allow-simulated   Compare a simulated run (run --simulate) with a real one; refused
                              otherwise, since a model's latencies are not the service's
          -p, --profile FILE  Take the tolerances from the profile's "compare" section,
                              {"p50": 0.2, "p99": 0.2, "errorRate": 0.01, "minLatencyDelta": "1ms"};
                              the flags above override it
          --force             Compare runs whose load differs all the same

        EXIT STATUS: 0 no regression, 2 a regression, 64 bad arguments, unreadable files
                     or a different load without --force.
        """

    static let merge = """
        USAGE: authload merge DIR... [--out DIR] [--partial] [--quiet]

        Merges the reports of a sharded run (authload run --shard I/N, or --shard-from-env
        in a Kubernetes Indexed Job) into one report: the one a single generator running the
        whole profile would have written. Each DIR is a shard's report directory (or its
        result.json), or a directory whose subdirectories are the shards' (a Job's volume).

        Histograms add exactly (a merged p99 is the p99 of every shard's samples), counts and
        errors add up, time series line up on the shards' common start (--start-at), and the
        thresholds are judged again on the merged data, windows included: a merged run can
        fail a threshold that every shard alone passed. Generator health is listed per
        shard; the worst shard decides exit 3.

        It refuses, in one line, shards of different profiles, seeds, command-line options,
        shard counts or intervals, a shard given twice, and missing shards.

        OPTIONS:
          -o, --out DIR   Where to write the merged report
                          (default Reports/<profile>-merged-<UTC timestamp>)
          --partial       Merge the shards there are when some are missing; the report
                          names the missing ones
          -q, --quiet     Print only the report's path

        EXIT STATUS: as authload run, judged on the merged data: 0 pass, 2 threshold failed,
                     3 a shard's generator overloaded, 64 shards that do not belong together.
        """
}
