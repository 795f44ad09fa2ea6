# frozen_string_literal: true

require "test_helper"
require "heron/profiler"

class SqlNormalizerTest < Minitest::Test
  def normalize(sql)
    Heron::Profiler::SqlNormalizer.normalize(sql)
  end

  def test_numbers_and_strings_become_placeholders
    assert_equal "SELECT * FROM posts WHERE user_id = ? AND title = ?",
                 normalize("SELECT * FROM posts WHERE user_id = 42 AND title = 'it''s'")
  end

  def test_in_lists_collapse
    assert_equal "SELECT * FROM t WHERE id IN (?)", normalize("SELECT * FROM t WHERE id IN (1, 2,3)")
  end

  def test_bind_markers_and_floats
    assert_equal "SELECT ? WHERE a = ? AND b < ?", normalize("SELECT $1 WHERE a = $2 AND b < 1.5e3")
  end

  def test_identifiers_with_digits_and_quoted_identifiers_stay
    assert_equal 'SELECT "2fa", t1.x FROM t1', normalize('SELECT "2fa", t1.x FROM t1')
  end

  def test_white_space_folds
    assert_equal "SELECT a FROM b", normalize("  SELECT a\n\t FROM   b ")
  end
end
