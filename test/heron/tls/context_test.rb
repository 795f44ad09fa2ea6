# frozen_string_literal: true

require "test_helper"
require "heron/tls/context"
require_relative "../../support/tls_certificates"

class HeronTLSContextTest < Minitest::Test
  include EnvHelper
  Context = Heron::TLS::Context

  include TLSCertificates::Fixture
  NAMES = %w[localhost other.test]

  def uri(*names, **extra) = ssl_bind(*names, **extra)

  def test_defaults_refuse_tls_below_1_2
    context = Context.new(uri("localhost"), environment: "production").ssl_context
    assert_predicate context, :frozen?
    assert_equal OpenSSL::SSL::VERIFY_NONE, context.verify_mode
    refute_includes context.ciphers.map(&:first), "AES128-SHA" # no suite without forward secrecy
  end

  def test_missing_files_and_unknown_parameters_are_config_errors
    error = assert_raises(Heron::ConfigError) { Context.new("ssl://127.0.0.1:0?cert=/nope&key=/nope", environment: "production") }
    assert_match %r{cannot read /nope}, error.message
    error = assert_raises(Heron::ConfigError) { Context.new(uri("localhost", bogus: 1)) }
    assert_match(/unknown TLS parameter "bogus"/, error.message)
    assert_raises(Heron::ConfigError) { Context.new(uri("localhost", min_version: "TLSv1")) }
    assert_raises(Heron::ConfigError) { Context.new(uri("localhost", verify: "peer")) } # no ca
  end

  def test_a_key_that_does_not_match_the_certificate_is_a_config_error
    mixed = "ssl://127.0.0.1:0?cert=#{@paths['localhost'][0]}&key=#{@paths['other.test'][1]}"
    assert_raises(Heron::ConfigError) { Context.new(mixed, environment: "production") }
  end

  def test_no_certificate_outside_development_is_a_config_error
    error = assert_raises(Heron::ConfigError) { Context.new("ssl://127.0.0.1:0", environment: "production") }
    assert_match(/give cert= and key=/, error.message)
  end

  def test_development_makes_a_certificate_once_and_reuses_it
    lines = []
    with_env("HERON_DEV_CERT_DIR" => File.join(@dir, "dev")) do
      first = Context.new("ssl://localhost:0", log: lines.method(:<<)).ssl_context
      second = Context.new("ssl://localhost:0", log: lines.method(:<<)).ssl_context
      assert_equal 1, lines.size
      assert_match(/curl --cacert/, lines.first)
      assert_equal File.read(File.join(@dir, "dev/localhost.crt")), File.read(File.join(@dir, "dev/localhost.crt"))
      refute_same first, second
      assert_equal 0o600, File.stat(File.join(@dir, "dev/localhost.key")).mode & 0o777
    end
  end

  def test_reload_reads_the_files_again
    context = Context.new(uri("localhost"), environment: "production")
    before = context.ssl_context
    File.write(@paths["localhost"][0], "garbage")
    assert_raises(Heron::ConfigError) { context.reload }
    assert_same before, context.ssl_context # a failed reload keeps the old certificate
    TLSCertificates.make(@dir, "localhost")
    refute_same before, context.reload
  end
end
