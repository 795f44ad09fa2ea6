# frozen_string_literal: true

require "test_helper"
require "json"
require "heron/profiler/dashboard"

class DashboardTest < Minitest::Test
  # A stand-in for Heron::Profiler::Store with the same two reader methods, for rendering tests.
  class FakeStore
    def initialize(records)
      @records = records
    end

    def recent(limit = nil)
      limit ? @records.first(limit) : @records
    end

    def find(id)
      @records.find { |record| record[:id] == id }
    end
  end

  QUERY = { sql: "SELECT * FROM roles WHERE user_id = 7", normalized: "SELECT * FROM roles WHERE user_id = ?",
            duration_ms: 0.4, call_site: "app/users.rb:12:in `roles'", adapter: "sqlite" }.freeze

  def setup
    @records = [record("b2", path: "/users", status: 200, n_plus_one: [{ call_site: QUERY[:call_site],
                                                                          normalized: QUERY[:normalized], count: 3 }]),
                record("a1", path: "/<script>alert(1)</script>", status: 500, queries: [], queue_ms: nil)]
    @config = Heron::Configuration.new
  end

  def test_index_lists_recent_requests_with_links_and_badges
    status, headers, body = get("/__heron")
    assert_equal 200, status
    assert_equal "text/html; charset=utf-8", headers["content-type"]
    assert_includes body, %(href="/__heron/requests/b2")
    assert_includes body, "N+1 ×3", "a finding reads ×COUNT of repeats, as on the request page"
    assert_includes body, "GET"
    assert_includes body, "12.5 ms"
    assert_operator body.index("/users"), :<, body.index("alert"), "newest first"
  end

  def test_index_escapes_everything_from_requests
    _, _, body = get("/__heron/")
    refute_includes body, "<script>"
    assert_includes body, "&lt;script&gt;"
  end

  def test_pages_are_self_contained
    _, headers, body = get("/__heron")
    refute_match(/<script|<link|src=|@import/, body)
    assert_match(/default-src 'none'/, headers["content-security-policy"])
    assert_equal "no-store", headers["cache-control"]
  end

  def test_index_limit_from_query
    _, _, body = get("/__heron.json", query: "limit=1")
    assert_equal ["b2"], JSON.parse(body)["requests"].map { |item| item["id"] }
  end

  def test_a_bad_query_string_falls_back_to_the_default_limit
    _, _, body = get("/__heron.json", query: "limit=%zz")
    assert_equal 2, JSON.parse(body)["requests"].size
  end

  def test_slow_requests_round_to_whole_ms_and_unknown_counts_show_a_dash
    @records = [record("slow", total_ms: 1234.4, allocations: nil)]
    _, _, body = get("/__heron")
    assert_includes body, "1234 ms"
    assert_match(%r{<td class="num">—</td>}, body)
  end

  def test_empty_store_and_nil_store_show_a_hint
    [FakeStore.new([]), nil].each do |store|
      _, _, body = get("/__heron", store: store)
      assert_includes body, "No requests recorded yet"
    end
  end

  def test_index_json_by_suffix_or_accept_header
    [["/__heron.json", {}], ["/__heron", { "HTTP_ACCEPT" => "application/json" }]].each do |path, headers|
      status, response_headers, body = get(path, **headers)
      assert_equal [200, "application/json"], [status, response_headers["content-type"]]
      first = JSON.parse(body)["requests"].first
      assert_equal %w[b2 /__heron/requests/b2], first.values_at("id", "url")
      refute first.key?("queries"), "the list leaves the SQL to the detail"
      assert_equal 3, first["n_plus_one"].first["count"]
    end
  end

  def test_detail_page_shows_sql_call_sites_and_n_plus_one
    status, _, body = get("/__heron/requests/b2")
    assert_equal 200, status
    assert_includes body, "SELECT * FROM roles WHERE user_id = 7"
    assert_includes body, "app/users.rb:12:in `roles&#39;"
    assert_includes body, "N+1 warnings (1)"
    assert_includes body, "×3"
    assert_includes body, "All 3 queries, in order"
    assert_includes body, "pending", "after_reply not done yet"
    assert_includes body, "width: 40.0%", "app outside the database: 5 of 12.5 ms"
  end

  def test_detail_page_links_to_the_flamegraph_and_memory_profile_of_the_same_request
    _, _, body = get("/__heron/requests/b2")
    assert_includes body, %(href="/users?page=2&amp;__heron=flamegraph")
    assert_includes body, %(href="/users?page=2&amp;__heron=flamegraph&amp;format=speedscope")
    assert_includes body, %(href="/users?page=2&amp;__heron=memory")
  end

  def test_n_plus_one_advice_shows_on_the_request_page_and_in_the_index_tooltip
    advice = "Users::User => [:roles]: add .eager(:roles)"
    @records.first[:n_plus_one] = [@records.first[:n_plus_one].first.merge(count: 1000, advice: advice)]
    _, _, page = get("/__heron/requests/b2")
    assert_includes page, "<code>Users::User =&gt; [:roles]: add .eager(:roles)</code>"
    assert_includes page, "×1,000"
    _, _, index = get("/__heron")
    assert_includes index, "N+1 ×1,000</span>"
    assert_includes index, "title=\"×1,000 at app/users.rb:12:in `roles&#39;: Users::User =&gt; [:roles]: add .eager(:roles)\""
  end

  # Reactor time is on every record; CPU time only on CPU-sampled ones (profile_cpu_sample).
  def test_reactor_time_in_the_index_and_both_times_on_the_request_page
    @records = [record("s1", reactor_ms: 7.5, cpu_ms: nil), record("s2", reactor_ms: 4.5, cpu_ms: 3.5)]
    _, _, index = get("/__heron")
    assert_includes index, "Reactor</th>"
    assert_includes index, "<td class=\"num\">7.5 ms</td>"
    _, _, unsampled = get("/__heron/requests/s1")
    assert_includes unsampled, %(<dt>Reactor</dt><dd class="">7.5 ms</dd></div>\n<div><dt>CPU</dt><dd class="">—</dd>)
    _, _, sampled = get("/__heron/requests/s2")
    assert_includes sampled, %(<dt>Reactor</dt><dd class="">4.5 ms</dd></div>\n<div><dt>CPU</dt><dd class="">3.5 ms</dd>)
  end

  def test_detail_page_lists_at_most_500_queries
    @records = [record("many", queries: [QUERY] * 501)]
    _, _, body = get("/__heron/requests/many")
    assert_includes body, "<td class=\"num\">500</td>"
    refute_includes body, "<td class=\"num\">501</td><td class=\"num\">0.4 ms"
    assert_includes body, "the JSON view has all 501"
  end

  def test_detail_page_without_queries_or_warnings
    _, _, body = get("/__heron/requests/a1")
    assert_includes body, "This request ran no SQL."
    assert_includes body, "None: no query shape repeated"
    assert_includes body, "<dd class=\"\">—</dd>", "unknown queue time"
  end

  def test_detail_json_by_suffix_or_accept_header
    _, _, body = get("/__heron/requests/b2.json")
    assert_equal 3, JSON.parse(body)["request"]["queries"].size
    _, _, body = get("/__heron/requests/b2", "HTTP_ACCEPT" => "application/json")
    assert_equal "b2", JSON.parse(body)["request"]["id"]
  end

  def test_string_keyed_records_are_accepted
    store = FakeStore.new([JSON.parse(JSON.generate(@records.first))])
    def store.find(id) = recent.find { |record| record["id"] == id }
    _, _, body = get("/__heron/requests/b2", store: store)
    assert_includes body, "SELECT * FROM roles"
  end

  def test_unknown_request_and_unknown_paths_are_404
    assert_equal 404, get("/__heron/requests/b2", store: nil).first
    %w[/__heron/requests/zz /__heron/elsewhere /__heronx /__heron/requests/].each do |path|
      assert_equal 404, get(path).first, path
    end
  end

  def test_head_and_other_methods
    status, headers, body = get("/__heron", method: "HEAD")
    assert_equal [200, ""], [status, body]
    assert_operator headers["content-length"].to_i, :>, 0
    assert_equal 405, get("/__heron", method: "POST").first
  end

  def test_custom_path_and_script_name
    @config = Heron::Configuration.new(profile_path: "/_prof")
    _, _, body = get("/_prof", "SCRIPT_NAME" => "/mounted")
    assert_includes body, %(href="/mounted/_prof/requests/b2")
  end

  def test_remote_clients_get_a_plain_404
    status, headers, body = get("/__heron", "REMOTE_ADDR" => "203.0.113.9")
    assert_equal [404, "text/plain", "Not Found\n"], [status, headers["content-type"], body]
  end

  def test_token_in_query_is_carried_on_in_links
    @config = Heron::Configuration.new(profile_token: "s3cret")
    _, _, body = get("/__heron", query: "token=s3cret", "REMOTE_ADDR" => "203.0.113.9")
    assert_includes body, %(href="/__heron/requests/b2?token=s3cret")
    _, _, body = get("/__heron", "REMOTE_ADDR" => "203.0.113.9", "HTTP_AUTHORIZATION" => "Bearer s3cret")
    assert_includes body, %(href="/__heron/requests/b2")
  end

  private

  def record(id, **overrides)
    { id: id, method: "GET", path: "/", query: "page=2", status: 200, started_at: 1_700_000_000.25,
      total_ms: 12.5, queue_ms: 0.3, app_ms: 11.0, db_ms: 6.0, db_count: 3, cpu_ms: 9.1,
      allocations: 12_345, gc_count: 0, after_reply_ms: nil, queries: [QUERY] * 3, n_plus_one: [] }.merge(overrides)
  end

  def get(path, store: FakeStore.new(@records), method: "GET", query: "", **env)
    app = Rack::Lint.new(Heron::Profiler::Dashboard.new(store, @config))
    env = Rack::MockRequest.env_for(path, method: method, "QUERY_STRING" => query,
                                          "REMOTE_ADDR" => "127.0.0.1", **env)
    status, headers, body = app.call(env)
    text = +""
    body.each { |chunk| text << chunk }
    body.close if body.respond_to?(:close)
    [status, headers, text]
  end
end
