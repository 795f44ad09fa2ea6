# frozen_string_literal: true

require "test_helper"
require "objspace"

# Server::EnvTemplate: the entries every env starts with, in a Hash with room for the rest.
class HeronServerEnvTemplateTest < Minitest::Test
  # A copy is made per request; with the room already there, filling it to a request's size
  # neither converts nor grows its table.
  def test_a_copy_has_room_for_a_whole_env
    env = Heron::Server::EnvTemplate.build(Heron::Configuration.new).merge
    size = ObjectSpace.memsize_of(env)
    (Heron::Server::EnvTemplate::ROOM - env.size).times { |i| env["HTTP_X_#{i}"] = "v" }
    assert_equal size, ObjectSpace.memsize_of(env)
  end

  def test_with_room_copies_the_entries_into_a_new_frozen_hash
    entries = { "a" => 1, "b" => 2 }
    copy = Heron::Server::EnvTemplate.with_room(entries, 32)
    assert_equal entries, copy
    assert_predicate copy, :frozen?
    refute_same entries, copy
  end
end
