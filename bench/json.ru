# frozen_string_literal: true

# The JSON endpoint for bench/run.rb and bench/instructions.rb: a Rack lambda that builds a small
# Hash and serialises it with the json gem on every request (TechEmpower's "JSON serialization"
# test), so the app's own allocations are part of each request, unlike bench/hello.ru.
require "json"

run ->(_env) { [200, { "content-type" => "application/json" }, [JSON.generate({ "message" => "Hello, World!" })]] }
