# frozen_string_literal: true

require "json"
require "rack/utils"
require_relative "users/user_serializer"
require_relative "users/show_user_serializer"
require_relative "users/index_query"
require_relative "users/index_cache"

module Demo
  # The /users JSON API of seed 004, on SQLite, to show what the profiler finds:
  #
  #   GET /users                every user with roles, groups, employee id and last login;
  #                             reads associations per user: 4 queries a user (the N+1)
  #   GET /users?eager=1        the same JSON from 5 queries (Sequel eager loading)
  #   GET /users?roles=admin    only users holding one of these roles (comma-separated)
  #
  # and seed 004's walk, one step each (heron-profiler/docs/profiling.md, "Walking through seed 004"):
  #
  #   GET /users?step=1         the show serializer for the index, lazily: 7 queries a user
  #   GET /users?step=2         the same, every association eager-loaded in one JOIN (eager_graph,
  #                             what ActiveRecord's includes does once a where names a table):
  #                             1 query, and a row per combination of a user's associated rows
  #   GET /users?step=3         an index-only query: 5 queries, only the columns shown, no models
  #   GET /users?step=4         step 3's body from an in-process cache: no query when warm
  #
  # Mounted at /users, so it answers PATH_INFO "" and "/"; anything else is 404.
  class UsersApp
    JSON_HEADERS = { "content-type" => "application/json" }.freeze
    SHOW = %i[roles groups employee last_login_token assignments group_assignments authentication_tokens].freeze

    def initialize
      @cache = Users::IndexCache.new
    end

    # @param env [Hash] the Rack env.
    # @return [Array(Integer, Hash, Array<String>)] the Rack response.
    def call(env)
      return error(404, "not found") unless ["", "/"].include?(env["PATH_INFO"])
      return error(405, "only GET") unless %w[GET HEAD].include?(env["REQUEST_METHOD"])
      params = Rack::Utils.parse_query(env["QUERY_STRING"].to_s)
      json(200, body(params))
    rescue Rack::Utils::InvalidParameterError
      error(400, "bad query string")
    end

    # @return [Users::IndexCache] the step-4 cache (call `expire` on it when users change).
    attr_reader :cache

    private

    def body(params)
      case params["step"]
      when "1" then list(filtered(params).all.map { |user| Users::ShowUserSerializer.new(user).as_json })
      when "2" then list(filtered(params).qualify.eager_graph(*SHOW).all.map { |user| Users::ShowUserSerializer.new(user).as_json })
      when "3" then list(index(params))
      when "4" then @cache.fetch(params["roles"].to_s) { list(index(params)) }
      else list(dataset(params).all.map { |user| Users::UserSerializer.new(user).as_json })
      end
    end

    def index(params)
      Users::IndexQuery.new(Users::User.db, params["roles"].to_s.strip.empty? ? nil : filtered(params).select(:id)).all
    end

    def list(users)
      JSON.generate(users: users, count: users.size)
    end

    def filtered(params)
      users = Users::User.order(:id)
      roles = params["roles"].to_s.split(",").map(&:strip).reject(&:empty?)
      roles.empty? ? users : users.with_roles(roles)
    end

    def dataset(params)
      users = filtered(params)
      eager?(params) ? users.eager(*Users::User::EAGER) : users
    end

    def eager?(params)
      %w[1 true yes].include?(params["eager"].to_s)
    end

    def error(status, message)
      json(status, JSON.generate(error: message))
    end

    def json(status, body)
      [status, JSON_HEADERS.merge("content-length" => body.bytesize.to_s), [body]]
    end
  end
end
