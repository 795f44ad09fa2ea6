# frozen_string_literal: true

require "test_helper"
require_relative "profiled_server"

# A real `heron -w 2 --profile`: whichever worker answers, its dashboard resolves every
# server-timing id and lists every worker's records and per-route counts.
class ProfilerRecordsClusterTest < Minitest::Test
  include ProfiledServer

  APP = %(run ->(env) { [200, { "content-type" => "text/plain" }, [Process.pid.to_s]] }\n)

  def test_every_record_id_resolves_on_any_worker
    check_cluster
  end

  def test_every_record_id_resolves_on_any_worker_of_a_preloaded_app
    check_cluster("--preload")
  end

  private

  def check_cluster(*args)
    pid, port, log = spawn_heron(APP, "-w", "2", "--profile", *args)
    records = served_records(port)
    assert_equal 2, records.values.uniq.size, "requests reached both workers"
    crossed = resolve_everywhere(port, records)
    assert crossed.positive?, "some records were read through the other worker"
    index = index(port)
    assert_empty records.keys - index["requests"].map { |record| record["id"] }, "the index lists every worker's records"
    route = index["routes"].find { |row| row["route"] == "GET /item/:id" }
    assert_equal records.size, route["count"], "the route counts every worker's requests"
  ensure
    stop(pid, log)
  end

  # 10 requests, then more until both workers have answered (the kernel picks the worker).
  # @return [Hash{String => Integer}] record id => pid of the worker that served it.
  def served_records(port)
    records = {}
    200.times do |i|
      status, headers, body = http_get(port, "/item/#{i}")
      assert_equal 200, status
      records[Heron::Profiler.record_id(headers.fetch("server-timing"))] = Integer(body)
      break if records.size >= 10 && records.values.uniq.size == 2
    end
    records
  end

  # Fetches each record's page on fresh connections until some page came from the other worker.
  # @return [Integer] how many pages showed a record measured by another worker.
  def resolve_everywhere(port, records)
    crossed = 0
    20.times do
      records.each do |id, worker|
        status, _, body = http_get(port, "/__heron/requests/#{id}")
        assert_equal 200, status, "record #{id} of worker #{worker} resolves"
        assert_includes body, "<code>#{id}</code>"
        crossed += 1 if Integer(body.force_encoding(Encoding::UTF_8)[/· pid (\d+)/, 1]) != worker
      end
      return crossed if crossed.positive?
    end
    crossed
  end

  def index(port)
    status, _, body = http_get(port, "/__heron.json?limit=500")
    assert_equal 200, status
    JSON.parse(body)
  end

  def stop(pid, log)
    return unless pid
    Process.kill("TERM", pid)
    wait_exit(pid)
    refute_match(/Error/, File.read(log))
  end
end
