# frozen_string_literal: true

require "test_helper"
require "heron/log/common_format"

class HeronLogCommonFormatTest < Minitest::Test
  ENV_SAMPLE = { "REQUEST_METHOD" => "POST", "PATH_INFO" => "/", "SERVER_PROTOCOL" => "HTTP/1.0" }.freeze

  def duration_field(duration)
    Heron::Log::CommonFormat.new.access(ENV_SAMPLE, 201, 0, duration).split[-3]
  end

  def test_duration_has_four_decimals
    assert_equal "0.0000", duration_field(0)
    assert_equal "0.0012", duration_field(0.00123)
    assert_equal "1.5000", duration_field(1.5)
    assert_equal "1.0000", duration_field(0.99996)
    assert_equal "12.3457", duration_field(12.345678)
    assert_equal "0.0001", duration_field(0.00005)
  end

  def test_missing_env_fields_stay_in_place
    line = Heron::Log::CommonFormat.new.access(ENV_SAMPLE, 201, 0, 0.5)
    assert_match %r{\A- - - \[[^\]]+\] "POST / HTTP/1\.0" 201 0 "-" "-" 0\.5000 level=info pid=\d+\n\z}, line
  end
end
