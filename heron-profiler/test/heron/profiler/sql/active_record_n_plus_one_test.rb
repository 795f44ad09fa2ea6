# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "tmpdir"
require "support/install_helper"

# A real Rails 7.1 app on SQLite (heron-profiler/test/fixtures/n_plus_one_app, from the Rails gem
# home bin/setup-rails installs; skipped without it) behind `heron` in development: each
# association kind read lazily per record, from a controller, an ERB partial rendered for a
# collection and a plain serializer, is advised with the `includes` that cures it, and the advice
# goes away once that is added; counts in a loop are advised with a counter cache; an `includes`
# never read is reported as unused, but not one only counted with `.size`. One app serves every
# test (booting Rails is the slow part); it stops when the run ends.
class ActiveRecordNPlusOneTest < Minitest::Test
  include InstallHelper

  APP = File.expand_path("../../../fixtures/n_plus_one_app", __dir__)
  CONTROLLER = "app/controllers/n1_controller.rb"

  class << self
    # @return [Array(Integer, String), nil] the shared app's port and log, once booted.
    attr_accessor :booted
  end

  def setup
    @gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "Rails is not installed (bin/setup-rails installs it; bin/test runs it)"
    @port, @log = self.class.booted ||= boot
  end

  def test_belongs_to_is_advised_with_includes
    assert_advised "belongs_to", "Post => [:author]: add .includes(:author)"
  end

  def test_has_one_is_advised_with_includes
    assert_advised "has_one", "Post => [:cover]: add .includes(:cover)"
  end

  def test_has_many_is_advised_with_includes
    assert_advised "has_many", "Post => [:comments]: add .includes(:comments)"
  end

  def test_has_many_through_is_advised_with_includes
    assert_advised "through", "Post => [:tags]: add .includes(:tags)"
  end

  def test_has_and_belongs_to_many_is_advised_with_includes
    assert_advised "habtm", "Post => [:categories]: add .includes(:categories)"
  end

  # Three pictures of posts, two of authors: a query shape per target class, one advice.
  def test_polymorphic_belongs_to_is_advised_with_includes_for_each_target_class
    advice = "Picture => [:imageable]: add .includes(:imageable)"
    header = n_plus_one("/n1/polymorphic")
    assert_match(/\A2 queries x3 at #{site('picture.imageable.label')} \[#{Regexp.escape(advice)}\] \(SELECT "posts"/, header)
    assert_match(/; x2 at #{site('picture.imageable.label')} \[#{Regexp.escape(advice)}\] \(SELECT "authors"/, header)
    assert_nil n_plus_one("/n1/polymorphic?eager=1")
    assert_equal "unused eager loading at #{site('Picture.includes(:imageable).order(:id).map(&:id)')} [Picture => [:imageable]: remove .includes(:imageable)]",
                 n_plus_one("/n1/polymorphic?eager=1&read=0")
  end

  def test_a_view_partial_rendered_for_a_collection_is_advised_at_its_template_line
    assert_advised "view", "Post => [:comments]: add .includes(:comments)", "app/views/n1/_post.html.erb:1"
  end

  def test_a_serializer_is_advised_for_each_association_it_reads
    header = n_plus_one("/n1/serializer")
    %w[author comments].each do |name|
      assert_includes header, "x5 at app/serializers/post_serializer.rb:10 [Post => [:#{name}]: add .includes(:#{name})]"
    end
    assert_nil n_plus_one("/n1/serializer?eager=1")
  end

  # `.size` of a collection not loaded counts in SQL: a counter cache cures that, not includes.
  # Once included, `.size` counts what is loaded: that is a use of the eager load (Bullet calls
  # it unused), so nothing is reported.
  def test_size_in_a_loop_is_advised_with_a_counter_cache_and_size_of_a_loaded_collection_is_a_use
    assert_match(/\A1 query x5 at #{site('def size')} \[Post => \[:comments\]: add a counter cache \(posts\.comments_count\)\] \(SELECT COUNT\(\*\)/,
                 n_plus_one("/n1/size"))
    assert_nil n_plus_one("/n1/size?eager=1"), "size of included comments: no N+1, no unused eager loading"
  end

  def test_count_in_a_loop_is_advised_with_a_counter_cache_or_size_when_loaded
    assert_includes n_plus_one("/n1/count"), "[Post => [:comments]: add a counter cache (posts.comments_count)] (SELECT COUNT(*)"
    assert_includes n_plus_one("/n1/count?eager=1"), "[Post => [:comments]: use .size (the collection is loaded: .count queries again)]"
  end

  def test_an_includes_never_read_is_reported_as_unused_eager_loading_everywhere
    advice = "Post => [:comments]: remove .includes(:comments)"
    response = get("/n1/unused")
    assert_equal "unused eager loading at #{site('Post.includes(:comments)')} [#{advice}]", response["x-heron-n-plus-one"]
    record = JSON.parse(get("/__heron/requests/#{response['server-timing'][/heron;desc="([^"]+)"/, 1]}.json").body)["request"]
    assert_equal [%w[unused_eager_loading 5] + [advice]], record["n_plus_one"].map { |f| [f["kind"], f["count"].to_s, f["advice"]] }
    assert_includes File.read(@log), "unused eager loading in GET /n1/unused: at #{site('Post.includes(:comments)')} [#{advice}]"
    page = get("/__heron/requests/#{response['server-timing'][/heron;desc="([^"]+)"/, 1]}").body
    assert_includes page, "eager loading of 5 records, never read"
    assert_includes get("/__heron").body, "N+1 unused</span>", "the dashboard's list marks it"
  end

  NESTED = <<~'RUBY'
    require "active_record"
    require "heron/profiler"
    ActiveRecord::Base.establish_connection(adapter: "sqlite3", database: ":memory:")
    ActiveRecord::Schema.verbose = false
    ActiveRecord::Schema.define do
      create_table(:posts) { |t| t.string :title }
      create_table(:comments) { |t| t.integer :post_id; t.integer :user_id }
      create_table(:users) { |t| t.string :name }
    end
    class Post < ActiveRecord::Base; has_many :comments; end
    class Comment < ActiveRecord::Base; belongs_to :user; end
    class User < ActiveRecord::Base; end
    user = User.create!(name: "u")
    3.times { Post.create!(title: "p").tap { |post| 2.times { post.comments.create!(user: user) } } }
    def check(label)
      Heron::Profiler.raising_n_plus_one { yield }
      puts "#{label}: nothing"
    rescue Heron::Profiler::NPlusOneError => e
      puts "#{label}: #{e.findings.map { |finding| finding[:advice] }.join('; ')}"
    end
    check("read") { Post.includes(comments: :user).map { |post| post.comments.map { |comment| comment.user.name } } }
    check("inner unread") { Post.includes(comments: :user).map { |post| post.comments.size } }
    check("inner lazy") { Post.includes(:comments).map { |post| post.comments.map { |comment| comment.user.name } } }
  RUBY

  # A model test's `raising_n_plus_one` (no server, no request) with nested includes: the inner
  # association is watched like the outer one.
  def test_raise_mode_sees_nested_includes
    Dir.mktmpdir("heron-n1-nested") do |dir|
      File.write(File.join(dir, "nested.rb"), NESTED)
      env = { "GEM_HOME" => @gem_home, "GEM_PATH" => [@gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
      output = run!(env, RbConfig.ruby, "-I", File.join(ROOT, "lib"), "-I", File.join(ROOT, "heron-profiler/lib"), "nested.rb", chdir: dir)
      assert_equal ["read: nothing", "inner unread: Comment => [:user]: remove .includes(:user)",
                    "inner lazy: Comment => [:user]: add .includes(:user)"], output.lines.map(&:chomp).grep(/\A[a-z ]+: /)
    end
  end

  private

  # The lazy case has one finding, five repeats at the case's line, with that advice; `?eager=1`
  # (the advice applied) has none; `?eager=1&read=0` (loaded up front, never read) is unused
  # eager loading of the same association; the same with `eager_load` (`?eager=join`).
  def assert_advised(name, advice, where = site("def #{name}"))
    assert_match(/\A1 query x5 at #{Regexp.escape(where)} \[#{Regexp.escape(advice)}\] \(SELECT /, n_plus_one("/n1/#{name}"))
    unused = "unused eager loading at #{site('posts.map(&:title)')} [#{advice.sub(': add ', ': remove ')}]"
    %w[1 join].each do |eager| # includes (a query per association), eager_load (one JOIN)
      assert_nil n_plus_one("/n1/#{name}?eager=#{eager}"), "#{name} with the advice applied (#{eager})"
      assert_equal unused, n_plus_one("/n1/#{name}?eager=#{eager}&read=0"), "#{name} loaded up front (#{eager}) and never read"
    end
  end

  # "app/controllers/n1_controller.rb:LINE" of the first line holding `text`.
  def site(text)
    line = File.readlines(File.join(APP, CONTROLLER)).index { |source| source.include?(text) }
    "#{CONTROLLER}:#{line + 1}"
  end

  def n_plus_one(path)
    response = get(path)
    assert_equal "200", response.code, response.body[0, 500]
    response["x-heron-n-plus-one"]
  end

  def get(path)
    get_when_up(@port, path, @log)
  end

  # Copies the app aside and starts heron on it; returns its port and log.
  def boot
    dir = Dir.mktmpdir("heron-n1")
    FileUtils.cp_r(File.join(APP, "."), dir)
    port = free_port
    log = File.join(dir, "server.log")
    env = { "GEM_HOME" => @gem_home, "GEM_PATH" => [@gem_home, *Gem.path].join(File::PATH_SEPARATOR) }
    argv = [RbConfig.ruby, "-I", File.join(ROOT, "heron-profiler/lib"), File.join(ROOT, "exe/heron"), "-e", "development",
            "--no-metrics", "-b", "tcp://127.0.0.1:#{port}", "config.ru"]
    pid = Bundler.with_unbundled_env { Process.spawn(env, *argv, chdir: dir, %i[out err] => log, pgroup: true) }
    Minitest.after_run { stop(pid, dir) }
    @serving_pid = pid
    get_when_up(port, "/n1/has_one", log, timeout: 180)
    [port, log]
  end

  def stop(pid, dir)
    Process.kill("TERM", -pid)
    Process.wait(pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  ensure
    FileUtils.rm_rf(dir)
  end
end
