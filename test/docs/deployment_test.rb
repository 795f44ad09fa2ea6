# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "open3"
require "yaml"
require_relative "../../bench/lib/deployment_configs"
require_relative "../support/nginx_helper"
require "heron/config/dsl"

# docs/deployment.md's configs are the ones that run: bench/scale_out.rb reads the same marked
# blocks ({DeploymentConfigs}); here each is checked by the program that will read it (nginx,
# HAProxy, Heron's config loader), and the Kubernetes manifest's numbers against heron.rb's.
class DeploymentDocTest < Minitest::Test
  def test_the_doc_marks_every_config_the_bench_and_this_test_use
    assert_equal %w[haproxy.cfg heron.rb kubernetes.yaml nginx.conf], DeploymentConfigs.all.keys.sort
  end

  def test_nginx_accepts_the_upstream_config
    skip "needs root to run nginx's worker as www-data" unless Process.uid.zero?
    Dir.mktmpdir("heron-doc-nginx") do |dir|
      File.write(File.join(dir, "nginx.conf"), DeploymentConfigs.nginx_conf(dir))
      output, status = Open3.capture2e(NginxHelper::NGINX, "-t", "-c", File.join(dir, "nginx.conf"), "-p", dir)
      assert status.success?, output
      assert_includes File.read(File.join(dir, "nginx.conf")), "proxy_next_upstream error timeout http_502"
    end
  end

  def test_haproxy_accepts_the_backend_config
    flunk "haproxy is not installed (bin/setup installs it)" unless system("command -v haproxy >/dev/null")
    Dir.mktmpdir("heron-doc-haproxy") do |dir|
      File.write(File.join(dir, "haproxy.cfg"), DeploymentConfigs.fetch("haproxy.cfg"))
      output, status = Open3.capture2e("haproxy", "-c", "-f", File.join(dir, "haproxy.cfg"))
      assert status.success?, output
    end
  end

  def test_heron_loads_the_config_file_with_the_platform_variables
    config = heron_config("PORT" => "8000", "WEB_CONCURRENCY" => "3", "HERON_DRAIN_DELAY" => "5")
    assert_equal ["tcp://0.0.0.0:8000"], config.bind_uris
    assert_equal 3, config.workers
    assert_equal "tcp://0.0.0.0:9393", config.control_bind
    assert_equal 5.0, config.drain_delay
  end

  def test_the_kubernetes_manifest_fits_the_heron_config
    pod = YAML.safe_load(DeploymentConfigs.fetch("kubernetes.yaml")).dig("spec", "template", "spec")
    container = pod["containers"].first
    env = container["env"].to_h { |pair| [pair["name"], pair["value"]] }
    config = heron_config(env)
    control_port = Integer(config.control_bind[/:(\d+)\z/, 1])
    assert_equal [control_port, "/health/ready"], container["readinessProbe"]["httpGet"].values_at("port", "path")
    assert_equal [control_port, "/health/live"], container["livenessProbe"]["httpGet"].values_at("port", "path")
    assert_equal Integer(env["PORT"]), config.port
    assert_operator pod["terminationGracePeriodSeconds"], :>, config.drain_delay + config.shutdown_timeout,
                    "the kubelet's SIGKILL must come after drain_delay + shutdown_timeout"
  end

  # The documented config opens the control port to every host, so it must never run without
  # a token: Heron refuses it, and with HERON_CONTROL_TOKEN set, stop needs the token.
  def test_the_config_file_never_runs_an_unauthenticated_control_port
    control = free_port
    Dir.mktmpdir("heron-doc-run") do |dir|
      File.write(File.join(dir, "heron.rb"), DeploymentConfigs.fetch("heron.rb").sub("0.0.0.0:9393", "0.0.0.0:#{control}"))
      File.write(File.join(dir, "config.ru"), "run ->(_env) { [200, {}, [\"ok\"]] }\n")
      log, status = run_heron(dir, {}, timeout: 30)
      assert_equal 1, status&.exitstatus, log
      assert_includes log, "control_token is not set"
      run_heron(dir, { "HERON_CONTROL_TOKEN" => "doc-token" }, timeout: 0) do |pid|
        eventually(timeout: 30) { control_answer(control, "GET /health/live") == 200 }
        assert_equal 401, control_answer(control, "POST /control/stop")
        refute Process.wait(pid, Process::WNOHANG), "stopped without the token"
      end
    end
  end

  private

  # Starts heron with the config in `dir`; yields its pid, then stops it, or waits `timeout`
  # seconds for it to exit by itself.
  def run_heron(dir, env, timeout:)
    log = File.join(dir, "heron.log")
    pid = Process.spawn({ "PORT" => "0" }.merge(env), RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"),
                        "-C", "heron.rb", "-b", "tcp://127.0.0.1:0", "config.ru", chdir: dir, out: log,
                                                                                   err: [:child, :out], pgroup: true)
    (@spawned_groups ||= []) << pid
    yield pid if block_given?
    status = block_given? ? stop_heron(pid) : wait_exit(pid, timeout: timeout)
    [File.read(log), status]
  end

  def control_answer(port, line)
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("#{line} HTTP/1.1\r\nhost: 127.0.0.1:#{port}\r\ncontent-length: 0\r\n\r\n")
    read_response(socket).first
  rescue SystemCallError
    nil
  ensure
    socket&.close
  end

  def heron_config(env)
    Dir.mktmpdir("heron-doc-config") do |dir|
      path = File.join(dir, "heron.rb")
      File.write(path, DeploymentConfigs.fetch("heron.rb"))
      saved = env.keys.to_h { |key| [key, ENV[key]] }
      env.each { |key, value| ENV[key] = value }
      Heron::Config::DSL.load(Heron::Configuration.new, path).apply_platform_env(env)
    ensure
      saved&.each { |key, value| ENV[key] = value }
    end
  end
end
