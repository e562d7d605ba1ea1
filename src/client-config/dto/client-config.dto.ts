/** What a client needs to start the OAuth2 flow and link to the community. */
export class ClientConfigDto {
  /**
   * The OAuth2 application (client) id.
   * @example "1100000000000000001"
   */
  client_id!: string;

  /**
   * The id of the bot's main guild.
   * @example "1100000000000000100"
   */
  main_server!: string;

  /**
   * Invite link of the support server.
   * @example "https://discord.gg/demo"
   */
  support_server_invite!: string;
}
