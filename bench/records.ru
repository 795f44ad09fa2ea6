# frozen_string_literal: true

# The allocation-heavy endpoint for bench/run.rb: 30 records built and serialised with the json
# gem on every request, closer to what a real index action allocates than bench/json.ru (about
# 300 objects per request in the app: each record a Hash with nested Hash and Array, interpolated
# Strings, Integers and Floats). bench/lib/app_cost.rb calls it in a loop with no server.
require "json"

RECORD_COUNT = 30
CREATED = 1_795_000_000

records = lambda do
  Array.new(RECORD_COUNT) do |i|
    { "id" => i, "name" => "record #{i}", "email" => "user#{i}@example.com", "active" => i.even?,
      "score" => i * 1.5, "created_at" => CREATED + i, "tags" => ["tag-#{i % 5}", "group-#{i % 3}"],
      "owner" => { "id" => i * 7, "login" => "owner#{i}" } }
  end
end

run ->(_env) { [200, { "content-type" => "application/json" }, [JSON.generate({ "records" => records.call })]] }
