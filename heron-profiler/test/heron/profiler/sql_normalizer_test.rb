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

  # scan (C) must give the regexps' string, down to their backtracking: random statements from
  # SQL's pieces, then from the characters that matter to it, compared with SqlNormalizer.quoted.
  PIECES = ["IN (", "in(", " IN  (", "In\t(", "IN", "1", "12", "1.5", "1e3", "1.5e-3", "2E+7", "1.", ".5", "e", "e+",
            "$1", "$", "?", ",", ", ", " ", "\t", "\n", "\v", ")", "(", "'", "''", "'it''s'", '"', '""', '"a"', "a",
            "x1", "_", ".", "-", "SELECT ", "`", "JOIN", "MIN("].freeze
  CHARACTERS = "iInN (),.$?'\"eE+-0123456789 \t\r\n\f\vax_`;".chars.freeze

  def assert_scans_like_the_regexps(random)
    5_000.times do
      sql = yield(random)
      assert_equal Heron::Profiler::SqlNormalizer.quoted(sql), Heron::Profiler::SqlScanner.scan(sql), sql.inspect
    end
  end

  def test_scan_gives_the_regexps_string_for_random_statements
    random = Random.new(16)
    assert_scans_like_the_regexps(random) { |r| Array.new(r.rand(1..14)) { PIECES.sample(random: r) }.join }
    assert_scans_like_the_regexps(random) { |r| Array.new(r.rand(1..20)) { CHARACTERS.sample(random: r) }.join }
    assert_scans_like_the_regexps(random) { |r| Array.new(r.rand(1..16)) { r.rand(0..127).chr }.join }
  end

  def test_scan_gives_the_regexps_string_for_an_eager_load
    sql = "SELECT `roles`.*, `a`.`user_id` AS 'x_foreign_key_x' FROM `roles` WHERE (`a`.`user_id` IN (#{(1..1000).to_a.join(', ')}))"
    assert_equal "SELECT `roles`.*, `a`.`user_id` AS ? FROM `roles` WHERE (`a`.`user_id` IN (?))", Heron::Profiler::SqlScanner.scan(sql)
  end

  def test_text_beyond_ascii_is_left_to_the_regexps
    assert_nil Heron::Profiler::SqlScanner.scan("SELECT 'caf\u00e9', 1")
    assert_equal "SELECT ?, ? FROM caf\u00e92", normalize("SELECT 'caf\u00e9', 1 FROM caf\u00e92")
  end
end
