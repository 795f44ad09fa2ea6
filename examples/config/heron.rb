# frozen_string_literal: true

# A Heron config file. Copy it to config/heron.rb (read by default) or pass it with
# `heron -C path/to/heron.rb`. Flags on the command line override what is set here.
# Every directive and its default: docs/configuration.md.

# -- Listening ---------------------------------------------------------------------------------
# With no `bind`, Heron listens on tcp://host:port (0.0.0.0:9292 by default).
bind "tcp://0.0.0.0:#{ENV.fetch('PORT', 9292)}"
# bind "unix:///tmp/heron.sock"           # repeatable: add as many listeners as you need

# -- Processes ---------------------------------------------------------------------------------
# `environment` with no argument is -e, else APP_ENV, else RACK_ENV, else "development".
if environment == "production"
  workers Integer(ENV.fetch("WEB_CONCURRENCY", 2)) # forked workers; 0 runs a single process
  preload_app!                                     # load the app once, before forking
  log_format :json                                 # one JSON object per log line
  profile false                                    # no profiler pages in production
else
  workers 0
end
threads 1                # reactor threads per process
max_connections 4096     # open connections per process before accepting pauses
shutdown_timeout 30      # seconds a graceful stop waits for requests in flight

before_fork do
  # Runs once in the master before the first fork: close connections the workers must not share.
end

on_worker_boot do |index|
  # Runs in each worker after the fork; index is 0 to workers - 1.
  $stderr.puts "worker #{index} booted (pid #{Process.pid})" if ENV["HERON_VERBOSE"]
end

# -- Application -------------------------------------------------------------------------------
rackup "config.ru"
# app { |env| [200, { "content-type" => "text/plain" }, ["hello"]] }  # instead of a rackup file

# -- Timeouts (seconds) and limits -------------------------------------------------------------
first_byte_timeout 10
header_timeout 10
keepalive_timeout 20
body_timeout 30
write_timeout 30
max_body_size 1024 * 1024 * 1024 # bytes; nil for no limit
max_target_bytes 8 * 1024
max_header_bytes 64 * 1024
max_header_fields 100

# -- HTTP behaviour ----------------------------------------------------------------------------
continue :lazy            # answer Expect: 100-continue when the app first reads the body
forwarded_proto false     # true only behind a proxy that sets X-Forwarded-Proto
after_reply_concurrency 64

# -- Profiling and metrics ---------------------------------------------------------------------
metrics_bind "tcp://127.0.0.1:9393"
# The profiler's settings, with the heron-profiler gem in the bundle (without it they are errors):
# profile_path "/__heron"
# profile_token ENV["HERON_PROFILE_TOKEN"] if ENV["HERON_PROFILE_TOKEN"]
# n_plus_one_threshold 2
