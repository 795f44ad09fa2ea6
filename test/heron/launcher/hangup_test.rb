# frozen_string_literal: true

require "test_helper"
require "openssl"
require_relative "../../support/tls_certificates"

# SIGHUP on a real `heron` with an ssl:// bind: new connections get the certificate now on disk,
# in the same process (single mode) and in every worker (cluster mode).
class HangupTest < Minitest::Test
  APP = "run lambda { |env| [200, { 'content-type' => 'text/plain' }, [Process.pid.to_s]] }\n"

  def serial(port, ca) = TLSCertificates.connect(port, ca) { |ssl| ssl.peer_cert.serial }

  # @param serving [Integer] processes that reload on their own (each logs it): a worker that has
  #   not yet done so still presents the old certificate, which the new CA file rejects.
  def check_reload(*args, serving: 1)
    Dir.mktmpdir do |dir|
      paths = TLSCertificates.make(dir, "127.0.0.1")
      cert, key = paths["127.0.0.1"]
      pid, _, log = spawn_heron(APP, "-b", "ssl://127.0.0.1:0?#{URI.encode_www_form(cert: cert, key: key)}", *args)
      port = eventually { File.read(log)[%r{https://127\.0\.0\.1:(\d+)}, 1] }.to_i
      before = serial(port, paths["ca"])
      TLSCertificates.make(dir, "127.0.0.1")
      Process.kill("HUP", pid)
      eventually { File.read(log).scan("1 TLS certificate(s) reloaded").size >= serving }
      eventually { 5.times.map { serial(port, paths["ca"]) }.none?(before) }
      Process.kill("TERM", pid)
      assert wait_exit(pid)&.success?
    end
  end

  def test_single_process_reloads_certificates
    check_reload
  end

  def test_cluster_workers_reload_certificates
    check_reload("-w", "2", serving: 2)
  end
end
