# frozen_string_literal: true

require "test_helper"

class HeronRequestExpectationTest < Minitest::Test
  Expectation = Heron::Request::Expectation

  def expect(value, http_minor: 1, length: 10)
    Expectation.new(value ? { "HTTP_EXPECT" => value } : {}, http_minor, length)
  end

  def test_no_expect_header_owes_nothing
    refute_predicate expect(nil), :pending?
  end

  def test_a_request_without_expect_shares_one_frozen_expectation
    assert_same Expectation::NONE, Expectation.for({}, 1, 10)
    assert_predicate Expectation::NONE, :frozen?
    refute_predicate Expectation::NONE, :pending?
    assert_predicate Expectation.for({ "HTTP_EXPECT" => "100-continue" }, 1, 10), :pending?
    assert_raises(Expectation::Failed) { Expectation.for({ "HTTP_EXPECT" => "x" }, 1, 10) }
  end

  def test_100_continue_with_a_body_is_pending_until_answered
    expectation = expect("100-continue")
    assert_predicate expectation, :pending?
    expectation.answered!
    refute_predicate expectation, :pending?
  end

  def test_the_value_is_case_insensitive
    assert_predicate expect("100-Continue"), :pending?
  end

  def test_chunked_bodies_are_owed_a_continue
    assert_predicate expect("100-continue", length: nil), :pending?
  end

  def test_an_empty_body_owes_nothing
    refute_predicate expect("100-continue", length: 0), :pending?
  end

  def test_http_1_0_never_expects
    refute_predicate expect("100-continue", http_minor: 0), :pending?
    refute_predicate expect("something-else", http_minor: 0), :pending?
  end

  def test_any_other_expectation_fails_with_417
    error = assert_raises(Expectation::Failed) { expect("something-else") }
    assert_equal 417, error.status
    assert_includes error.message, "something-else"
  end

  def test_the_message_quotes_at_most_40_bytes_of_the_value
    error = assert_raises(Expectation::Failed) { expect("x" * 500) }
    assert_operator error.message.bytesize, :<, 80
  end
end
