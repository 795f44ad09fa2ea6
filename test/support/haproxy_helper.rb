# frozen_string_literal: true

require "tmpdir"
require "fileutils"

# Runs a real HAProxy (Debian's haproxy package, installed by bin/setup) in front of a test server.
module HAProxyHelper
  # Starts haproxy in the foreground with a frontend on [::1]:front and one backend server.
  # @param front [Integer] the frontend port (see {#free_port}).
  # @param backend [String] the `server` line's address and options, e.g. "127.0.0.1:8080 send-proxy".
  # @param mode [String] "tcp" or "http".
  # @param options [Array<String>] extra lines for the backend section (e.g. "option forwardfor").
  # @return [Integer] haproxy's pid, for {#stop_haproxy}.
  def start_haproxy(front, backend, mode: "tcp", options: [])
    skip "haproxy is not installed (bin/setup installs it)" unless system("command -v haproxy >/dev/null")
    dir = Dir.mktmpdir("heron-haproxy")
    config = File.join(dir, "haproxy.cfg")
    File.write(config, <<~CFG)
      defaults
        mode #{mode}
        timeout connect 5s
        timeout client 10s
        timeout server 10s
      frontend front
        bind [::1]:#{front}
        default_backend heron
      backend heron
        #{options.join("\n  ")}
        server heron #{backend}
    CFG
    pid = Process.spawn("haproxy", "-db", "-f", config, out: File::NULL, err: File.join(dir, "haproxy.log"))
    (@haproxy_dirs ||= {})[pid] = dir
    eventually { (TCPSocket.new("::1", front).close || true) rescue false }
    pid
  end

  # Stops a haproxy started by {#start_haproxy} and removes its directory.
  def stop_haproxy(pid)
    return unless pid
    Process.kill("TERM", pid)
    Process.wait(pid)
    FileUtils.rm_rf(@haproxy_dirs.delete(pid))
  end
end

Minitest::Test.include(HAProxyHelper)
