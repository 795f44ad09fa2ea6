# frozen_string_literal: true

# Heron's demo: one endpoint per seed write-up. `bin/run` serves it on port 9292; the README
# lists a curl command for each.
require "async"
require "async/barrier"
require "net/http"
require "rack/request"
require_relative "users_app"

# Rack 3 headers are a fresh, mutable Hash per response (middleware may add to them).
module Demo
  def self.text = { "content-type" => "text/plain" }
end

# Seed 000: work that is not on the critical path runs after the reply.
class Processor
  def call
    3.times do |count|
      $stdout.puts "counting #{count}"
      sleep 1
    end
  end
end

map "/hello" do
  run ->(_env) { [200, Demo.text, ["Hello world\n"]] }
end

map "/after_reply" do
  run lambda { |env|
    env["rack.after_reply"] << Processor.new
    [200, Demo.text, ["Hello Earthlings (3 s of counting follows in the server log, after this reply)\n"]]
  }
end

# Seed 001: curl sends Expect: 100-continue for bodies over 1 KiB. Heron answers 100 when the
# app reads the body, so this returns at once instead of after curl's 1 s wait.
map "/foo" do
  run lambda { |env|
    params = Rack::Request.new(env).POST
    [200, Demo.text, ["There are #{params.length} params\n"]]
  }
end

# ... and an app can refuse an upload from its headers alone, before the client sends it.
map "/upload_refused" do
  run ->(_env) { [413, Demo.text, ["uploads are closed (the body was never sent)\n"]] }
end

# Seed 003: a slow endpoint; many at once still answer in about 1 s each.
map "/sleep" do
  run lambda { |env|
    ms = Integer(Rack::Request.new(env).params.fetch("ms", "1000"), exception: false) || 1000
    sleep(ms.clamp(0, 10_000) / 1000.0)
    [200, Demo.text, ["slept #{ms} ms\n"]]
  }
end

# Seed 002: fan out inside a request with Async; Heron is the reactor the tasks run in.
# Three 500 ms calls (to this server's own /sleep) finish together in about 500 ms.
map "/fanout" do
  run lambda { |env|
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    barrier = Async::Barrier.new
    results = 3.times.map do |i|
      barrier.async { Net::HTTP.get(URI("http://127.0.0.1:#{env['SERVER_PORT']}/sleep?ms=500")).strip + " (#{i})" }
    end
    barrier.wait
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    [200, Demo.text, [results.map(&:wait).join("\n"), format("\ntotal %.0f ms\n", elapsed * 1000)]]
  }
end

# Seed 004: /users has the N+1 queries, /users?eager=1 eager-loads; see /__heron.
map "/users" do
  run Demo::UsersApp.new
end

map "/" do
  run lambda { |_env|
    [200, Demo.text, [<<~TEXT]]
      Heron demo
        /hello                 hello world
        /after_reply           seed 000: the reply first, 3 s of work after it
        /foo                   seed 001: POST a >1 KiB form with curl; no 1 s stall
        /upload_refused        seed 001: refused before the body is sent
        /sleep?ms=1000         seed 003: slow endpoint for `heron attack`
        /fanout                seed 002: Async fan-out inside a request
        /users, /users?eager=1 seed 004: N+1 vs eager loading; open /__heron
    TEXT
  }
end
