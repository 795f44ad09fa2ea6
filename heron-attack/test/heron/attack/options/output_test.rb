# frozen_string_literal: true

require "test_helper"
require_relative "../support/option_groups"

class OptionsOutputTest < Minitest::Test
  include OptionGroups
  Output = Heron::Attack::Options::Output

  def output(*argv)
    rest = argv.dup
    parse_group(rest, Output.new).tap { |output| output.take_compared!(rest) }
  end

  def test_defaults_write_nothing_but_the_text_report
    output = output("http://h/")
    assert_equal [false, nil, nil, nil, nil, nil], [output.per_request, output.json, output.html, output.hdr_log, output.csv, output.compare]
  end

  def test_compare_takes_the_files_left_and_wants_two_to_eight
    output = output("--compare", "a.json", "b.json", "--html", "o.html", "c.json")
    output.check_compare!
    assert_equal [%w[a.json b.json c.json], "o.html"], [output.compare, output.html]
    error = assert_raises(Heron::Attack::UsageError) { output("--compare", "a.json").check_compare! }
    assert_equal "--compare takes two or more files: --compare A.json B.json [C.json ...]", error.message
    error = assert_raises(Heron::Attack::UsageError) { output("--compare", *(1..9).map { |i| "#{i}.json" }).check_compare! }
    assert_equal "--compare takes at most 8 files", error.message
  end
end
