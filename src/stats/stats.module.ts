import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ShardStatusEntity } from 'src/stats/shard-status.entity';
import { StatsController } from 'src/stats/stats.controller';
import { StatsService } from 'src/stats/stats.service';
import { Feature } from 'src/common/feature/feature.decorator';

/** Shard reports from the bot's processes and `GET /bot-stats`. */
@Feature({ tags: { stats: "The bot's shards and reach" } })
@Module({
  imports: [TypeOrmModule.forFeature([ShardStatusEntity])],
  controllers: [StatsController],
  providers: [StatsService],
  exports: [StatsService],
})
export class StatsModule {}
