# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsTLSTest < Minitest::Test
  include OptionGroups
  TLS = Heron::Attack::Options::TLS

  def tls(*argv)
    parse_group(argv, TLS.new)
  end

  def test_default_leaves_the_system_cas_to_the_client
    tls = TLS.new
    tls.check!(["http/1.1"])
    assert_nil tls.context
  end

  def test_insecure_builds_a_context_offering_the_alpn_given
    tls = tls("-k")
    tls.check!(["h2"])
    assert_equal [OpenSSL::SSL::VERIFY_NONE, ["h2"]], [tls.context.verify_mode, tls.context.alpn_protocols]
  end

  def test_insecure_and_cacert_are_not_both_given
    error = assert_raises(Heron::Attack::UsageError) { tls("-k", "--cacert", "ca.pem").check!(["http/1.1"]) }
    assert_equal "give --insecure or --cacert, not both", error.message
  end
end
