# frozen_string_literal: true

# Seed 003 endpoint for bench/run.rb: sleeps 1000 ms (or ?ms=N) and answers "ok".
# Kernel#sleep blocks a thread on Puma and yields the fiber on fiber-scheduler servers (Heron, Falcon).
run lambda { |env|
  ms = env["QUERY_STRING"].to_s[/(?:\A|&)ms=(\d+)/, 1]
  sleep((ms ? ms.to_i : 1000) / 1000.0)
  [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]]
}
