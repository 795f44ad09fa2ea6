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

  def test_a_long_in_list_collapses_with_or_without_quotes
    ids = (1..1000).to_a.join(", ")
    assert_equal "SELECT * FROM `roles` WHERE (`id` IN (?))", normalize("SELECT * FROM `roles` WHERE (`id` IN (#{ids}))")
    assert_equal 'SELECT * FROM "roles" WHERE ("id" IN (?))', normalize(%(SELECT * FROM "roles" WHERE ("id" IN (#{ids}))))
    assert_equal "SELECT ? WHERE a IN (?) AND b IN (?)", normalize("SELECT $1 WHERE a IN ($2, ?, 3.5) AND b in(4)")
  end

  # An eager load's IN list is one match, not a thousand: each match allocates, and a thousand
  # per statement were enough to promote a concurrent request's rows (docs/profiling.md).
  def test_a_long_in_list_with_quotes_allocates_little
    sql = %(SELECT * FROM "roles" WHERE ("user_id" IN (#{(1..1000).to_a.join(', ')})))
    normalize(sql)
    before = GC.stat(:total_allocated_objects)
    normalize(sql)
    assert_operator GC.stat(:total_allocated_objects) - before, :<, 100
  end

  def test_quotes_keep_in_and_numbers_inside_them_as_the_tokens_they_are_part_of
    assert_equal "SELECT ?, ?, ?", normalize("SELECT 'IN (', 1, ')'")
    assert_equal 'SELECT "x IN (1, 2)" FROM t', normalize('SELECT "x IN (1, 2)" FROM t')
    assert_equal "SELECT ?IN (?)", normalize("SELECT $1IN (2)")
  end

  def test_single_spaces_stay_and_other_white_space_folds
    assert_equal "a b c d", normalize("a b\tc\r\n d")
  end
end
