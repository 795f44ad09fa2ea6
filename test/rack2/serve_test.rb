# frozen_string_literal: true

require "test_helper"
require "json"
require "net/http"

# Rack 2 apps under Heron (issue 14, point 6). Heron runs in a child process with the bundle in
# test/rack2/Gemfile (Rack 2.2, Sinatra 3), installed by bin/setup; the test talks to it over a
# real socket.
class Rack2ServeTest < Minitest::Test
  DIR = File.expand_path(__dir__)
  GEMFILE = File.join(DIR, "Gemfile")

  def setup
    env = { "BUNDLE_GEMFILE" => GEMFILE }
    return if system(env, "bundle", "check", out: File::NULL, err: File::NULL)
    flunk "the Rack 2 bundle is not installed: run bin/setup (BUNDLE_GEMFILE=test/rack2/Gemfile bundle install)"
  end

  def test_rack2_app_gets_the_rack2_env_and_its_header_hash_response_is_served
    with_rack2_heron("rack2_app.ru") do |http|
      response = http.post("/", "x=1&y=two", "Content-Type" => "application/x-www-form-urlencoded")
      assert_equal "200", response.code, response.body
      facts = JSON.parse(response.body)
      assert_match(/\A2\.2\./, facts["rack"])
      assert_equal [[1, 3], false, false, false, true], facts.values_at("version", "multithread", "multiprocess", "run_once", "hijack")
      assert_equal ["x=1&y=two", "x=1&y=two"], facts.values_at("body", "rewound"), "rack.input is rewindable"
      assert_equal "application/json", response["content-type"]
      assert_equal ["a=1", "b=2"], response.get_fields("set-cookie"), "newline-joined Set-Cookie becomes two fields"
    end
  end

  def test_sinatra3_app
    with_rack2_heron("sinatra_app.ru") do |http|
      response = http.get("/hello/ann")
      assert_equal ["200", "Hello ann from Sinatra 3.2.0 on Rack 2.2"], [response.code, response.body[/.*Rack 2\.2/]]
      form = http.post("/form", "name=bo", "Content-Type" => "application/x-www-form-urlencoded")
      assert_equal "name=bo size=7", form.body, "params parsed from the body, which is then read again"
      teapot = http.get("/teapot")
      assert_equal ["418", "short and stout", "teapot"], [teapot.code, teapot["x-reason"], teapot.body]
      assert_equal ["302", "/hello/there"], [http.get("/away").code, URI(http.get("/away")["location"]).path]
    end
  end

  # Under Rack 2, rewindable_input is on by default: the input is Heron's RewindableInput (kept
  # as read, memory then Tempfile); set off, Rack::RewindableInput still makes it rewindable.
  def test_rack2_input_is_herons_rewindable_input_unless_turned_off
    with_rack2_heron("input_class_app.ru") do |http|
      assert_equal "Heron::Request::RewindableInput abc abcdef", http.post("/", "abcdef", "Content-Type" => "application/octet-stream").body
    end
    command = [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-b", "tcp://127.0.0.1:0", "-e", "production",
               "--no-rewindable-input", "input_class_app.ru"]
    with_rack2_heron(command) do |http|
      assert_equal "Rack::RewindableInput abc abcdef", http.post("/", "abcdef", "Content-Type" => "application/octet-stream").body
    end
  end

  # Rack 2's `rackup -s heron` (and Rails 7.0's `rails server -u heron`) find the handler through
  # Rack::Handler.get("heron"), which requires rack/handler/heron.
  def test_rack2_rackup_dash_s_heron
    command = ["bundle", "exec", "rackup", "-I", File.join(ROOT, "lib"), "-s", "heron", "-o", "127.0.0.1", "-p", "0",
               "-E", "production", "rack2_app.ru"]
    with_rack2_heron(command) do |http|
      response = http.post("/", "q=1", "Content-Type" => "application/x-www-form-urlencoded")
      assert_equal ["200", "q=1"], [response.code, JSON.parse(response.body)["rewound"]]
    end
  end

  private

  def with_rack2_heron(rackup)
    log = File.join(Dir.mktmpdir("heron-rack2"), "heron.log")
    env = { "BUNDLE_GEMFILE" => GEMFILE, "RUBYOPT" => "-rbundler/setup" }
    command = rackup.is_a?(Array) ? rackup : [RbConfig.ruby, File.join(ROOT, "exe/heron"), "-b", "tcp://127.0.0.1:0", "-e", "production", rackup]
    pid = Process.spawn(env, *command, chdir: DIR, out: log, err: [:child, :out], pgroup: true)
    port = wait_for_port(log, pid)
    Net::HTTP.start("127.0.0.1", port) { |http| yield http }
    refute_match(/ERROR/, File.read(log))
  ensure
    if pid
      Process.kill("TERM", -pid)
      wait_exit(pid)
    end
  end
end
