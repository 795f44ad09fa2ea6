# frozen_string_literal: true

# An app with a fixed capacity, like one with a database pool: 4 "connections", each request
# holds one for 20 ms, so it serves at most 200 requests/s however many wait. bench/load_shedding.rb
# drives it at twice that.
require "async/semaphore"

POOL = Async::Semaphore.new(4)
run ->(_env) { POOL.acquire { sleep 0.02 }; [200, { "content-type" => "text/plain" }, ["ok"]] }
